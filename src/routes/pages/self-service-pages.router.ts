import type { Request } from 'express';
import { z } from 'zod';
import { pageEnvOf } from '../../middleware/page-env';
import { AppError } from '../../errors';
import { UUID_PATTERN } from '../../lib/ids';
import { Redirect } from '../../http/outcome';
import { clearedSessionCookies } from '../../middleware/session-cookies';
import * as account from '../../services/account.service';
import * as auth from '../../services/auth.service';
import * as links from '../../services/email-links.service';
import { loadFactors } from '../../services/mfa/factors.service';
import * as passkeys from '../../services/mfa/passkeys.service';
import { hasSecondFactor } from '../../services/mfa/policy';
import { regenerateRecoveryCodes } from '../../services/mfa/recovery-codes.service';
import * as totp from '../../services/mfa/totp.service';
import { disconnectApp, listConnectedApps } from '../../services/oauth/apps.service';
import { listSamlAppsOfPerson } from '../../services/saml/saml-apps.service';
import { resolveReturnTo } from '../../services/oauth/return-to';
import type { Principal } from '../../services/principal';
import { renderAccountPage, type AccountPageData, type AccountSection } from '../../views/account';
import { requestMeta } from '../shared';
import { optionalProofBody, passkeyNameField, passkeyNewNameField, registrationResponseField } from '../../wire/auth/mfa.schemas';
import { NAME_MAX_CHARACTERS, nameField, passwordField } from '../../wire/common.schemas';
import type { Messages } from '../../i18n';
import { pageEnv } from '../../views/env';
import { pageErrorMessage, passwordProblem, type PageErrorTexts } from './page-messages';
import { declareRouter, route, type DeclaredRoute } from '../route';
import type { RouteDeps } from '../types';
import { hostedPage, optionalText, PAGE, refuseForm, text } from './page-kit';
import { qrCodeSvg } from '../../lib/qr-code';
import { RECENT_SIGN_IN_SECONDS } from '../../services/mfa/reauth-policy';
import { listOwnIdentities, unlinkOwnIdentity } from '../../services/federation/identities.service';
import { mayLinkFromSession } from '../../services/federation/linking-policy';
import { FederationRefused, startFederatedSignIn } from '../../services/federation/sign-in.service';
import { browserTokenCookie } from '../federation/federation.router';
import { listEnabledProviders } from '../../services/federation/providers.service';
import { authorizationOriginOf } from '../../services/federation/relying-party';
import type { ServiceContext } from '../../services/context';

/** A refusal the page itself words (already in the page's language); other AppErrors are worded by their code. */
class FormRefusal extends AppError {
  constructor(
    message: string,
    /** The input (its id on the page) the refusal is about, when it is not the form's first. */
    readonly field?: string,
  ) {
    super('validation_error', message);
  }
}

/** The input (by id) a refusal of each form is shown beside and the error summary links to (CONTRACT §18). */
const FIELD_OF: Partial<Record<string, string>> = {
  profile: 'first_name',
  password: 'current_password',
  'totp/confirm': 'totp_code',
  'totp/remove': 'totp_remove_code',
  'recovery-codes': 'recovery_password',
};

/** What a refused form kept as entered (never a password or a code). */
const keptValues = (input: unknown): Record<string, string> => {
  const kept: Record<string, string> = {};
  if (typeof input !== 'object' || input === null) return kept;
  for (const [k, v] of Object.entries(input)) if ((k === 'first_name' || k === 'last_name') && typeof v === 'string') kept[k] = v;
  return kept;
};

/** What every factor-changing form says for the re-authentication refusals of CONTRACT §11. */
const REAUTH_TEXTS = (t: Messages): PageErrorTexts => ({
  reauthentication_required: t.pageErrors.reauthOld,
  reauthentication_failed: t.pageErrors.reauthentication_failed,
});

const currentT = (): Messages => pageEnv().t;

/** The enrolment context MFA_REQUIRED_FOR_ADMINS sends along (kept on every form of the page). */
const contextQuery = z.object({ enrol: optionalText(16), return_to: optionalText(4096), done: optionalText(32) });
type Context = z.output<typeof contextQuery>;

/** The notice keys of the page (their texts are in the catalogues, `accountNotices`). */
const NOTICES = {
  profile: true,
  password: true,
  session: true,
  others: true,
  app: true,
  totp_setup: true,
  totp_removed: true,
  passkey: true,
  passkey_renamed: true,
  passkey_removed: true,
  verification: true,
  identity_linked: true,
  identity_unlinked: true,
} as const;
const isNotice = (key: string): key is keyof typeof NOTICES => Object.hasOwn(NOTICES, key);

/**
 * What a form post did: a notice key (303 back to the page), something to show once (rendered at once), or somewhere
 * else to go (signed out, the provider of a link).
 */
type Step = { done: keyof typeof NOTICES } | { show: Partial<AccountPageData> } | Redirect;

function contextQs(context: Context, done?: string): string {
  const params = new URLSearchParams();
  if (done) params.set('done', done);
  if (context.enrol === 'required') params.set('enrol', 'required');
  if (context.return_to) params.set('return_to', context.return_to);
  const qs = params.toString();
  return qs ? `?${qs}` : '';
}

const SECTION_ANCHOR: Record<AccountSection, string> = {
  profile: '',
  password: '',
  sessions: '#sessions',
  apps: '#apps',
  'second-factors': '#second-factors',
  identities: '#identities',
};

/**
 * /account (CONTRACT §10): profile, password, sessions, connected apps, second factors and passkeys, for the signed-in
 * person. Server-rendered; every change is a CSRF-protected form post calling the same services as the JSON API,
 * answered with 303 back to the page (or the page itself when something is shown once, like recovery codes).
 */
export function createSelfServicePagesRouter(deps: RouteDeps) {
  const app = deps.ctx;
  const { config } = app;

  async function render(
    ctx: ServiceContext,
    req: Request,
    principal: Principal,
    context: Context,
    status: number,
    extra: Partial<AccountPageData> = {},
  ) {
    const [sessions, apps, factors, pending, current, identities, providers, samlApps, hasPassword] = await Promise.all([
      account.listOwnSessions(ctx, principal),
      listConnectedApps(ctx, principal.userId),
      loadFactors(ctx.db, principal.userId),
      totp.pendingTotp(ctx, principal),
      account.findOwnSession(ctx, principal),
      listOwnIdentities(ctx, principal.userId),
      listEnabledProviders(ctx),
      listSamlAppsOfPerson(ctx, principal.userId),
      account.hasOwnPassword(ctx, principal),
    ]);
    // CONTRACT §11: past 10 minutes, the forms that change a factor ask for the password too.
    const authAgeSeconds = current ? (ctx.clock.now().getTime() - current.authTime.getTime()) / 1000 : Infinity;
    const appNames = new Map(apps.map((a) => [a.clientId, a.clientName]));
    const enrolRequired = context.enrol === 'required';
    const returnTo = resolveReturnTo(config, context.return_to);
    const linkableProviders = providers.filter((p) => !identities.some((i) => i.providerId === p.id));
    // A link (or confirm) form's post ends at the provider's authorization endpoint (CSP form-action, issue 30).
    const flaggedProviders = providers.filter((p) => identities.some((i) => i.providerId === p.id && i.needsConfirmation));
    const formTargets = await Promise.all([...linkableProviders, ...flaggedProviders].map((p) => authorizationOriginOf(ctx, p)));
    const notice = context.done && isNotice(context.done) ? pageEnvOf(req).t.accountNotices[context.done] : undefined;
    const pendingTotp = pending ? { ...pending, qrSvg: await qrCodeSvg(pending.otpauthUrl) } : undefined;
    return hostedPage(
      ({ csrf }) =>
        renderAccountPage({
          csrf,
          email: principal.email,
          firstName: principal.firstName,
          lastName: principal.lastName,
          sessions: sessions.map((s) => ({
            id: s.id,
            userAgent: s.userAgent,
            ip: s.ip,
            lastUsedAt: s.lastUsedAt,
            clientName: s.clientId ? (appNames.get(s.clientId) ?? s.clientId) : null,
            current: s.id === principal.sessionId,
          })),
          apps: apps.map((a) => ({ clientId: a.clientId, name: a.clientName, scopes: a.scopes, grantedAt: a.grantedAt })),
          samlApps: samlApps.map((a) => ({ name: a.name, signInUrl: `/saml/sso?app=${a.appId}`, lastSignInAt: a.lastSignInAt })),
          totp: factors.totp ? 'on' : pending ? 'pending' : 'off',
          pendingTotp,
          passkeys: factors.passkeys.map((p) => ({ id: p.id, name: p.name, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt })),
          recoveryCodesLeft: factors.recoveryCodesLeft,
          reauthenticate: authAgeSeconds > RECENT_SIGN_IN_SECONDS,
          emailVerified: principal.emailVerified,
          hasPassword,
          notice,
          enrolRequired,
          continueTo: enrolRequired && hasSecondFactor(principal.amr) ? (returnTo ?? '/login') : undefined,
          formQuery: contextQs(context),
          identities: identities.map((i) => ({
            id: i.id,
            providerName: i.providerName,
            email: i.email,
            createdAt: i.createdAt,
            confirmSlug: i.needsConfirmation ? i.providerSlug : undefined,
          })),
          linkableProviders: linkableProviders.map((p) => ({ name: p.name, slug: p.slug })),
          ...extra,
        }),
      status,
      formTargets,
    );
  }

  const signInFirst = () => new Redirect(`/login?${new URLSearchParams({ return_to: `${config.baseUrl}/account` })}`);

  /**
   * One form post of the page: its fields, the section its errors show in, what it does, and what it says for the
   * error codes its services can throw (`texts`, from the page's catalogue; other codes get the catalogue's sentence).
   */
  function action<B extends z.ZodType>(
    path: string,
    summary: string,
    section: AccountSection,
    body: B,
    run: (ctx: ServiceContext, principal: Principal, body: z.output<B>, req: Request) => Promise<Step>,
    texts: (t: Messages) => PageErrorTexts = () => ({}),
  ): DeclaredRoute {
    return route(
      {
        ...PAGE,
        method: 'post',
        path: `/account/${path}`,
        summary,
        auth: 'browser',
        // CONTRACT §11: hosted forms that take passwords and codes are under the per-IP limiter, like the sign-in form.
        rateLimit: true,
        csrf: refuseForm,
        query: contextQuery,
        body,
        response: { description: '303 to /account, or the page', kind: 'html' },
      },
      async ({ principal, query, body: input, env, ctx }, req) => {
        if (!principal || principal.clientId) return signInFirst();
        try {
          const step = await run(ctx, principal, input, req);
          if (step instanceof Redirect) return step;
          if ('done' in step) return new Redirect(`/account${contextQs(query, step.done)}${SECTION_ANCHOR[section]}`);
          // The page shows the session as it is now (e.g. a factor just proved adds to its amr).
          const amr = (await account.findOwnSession(ctx, principal))?.amr ?? principal.amr;
          return await render(ctx, req, { ...principal, amr }, query, 200, step.show);
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          const { t } = env;
          const message =
            err instanceof FormRefusal
              ? err.message
              : err instanceof FederationRefused
                ? t.federation.refused[err.reason](err.providerName)
                : pageErrorMessage(t, err, { ...REAUTH_TEXTS(t), ...texts(t) });
          const field = err instanceof FormRefusal && err.field ? err.field : FIELD_OF[path];
          const refused = await render(ctx, req, principal, query, err.status, {
            error: { section, message, field },
            values: keptValues(input),
          });
          return refused.withHeaders(err.headers);
        }
      },
    );
  }

  const fail = (message: string, field?: string) => new FormRefusal(message, field);
  /** A field read by the API's own schema; refused with the page's sentence (the zod message is the API's English). */
  const checked = <T>(schema: z.ZodType<T, unknown>, value: unknown, message: string, field?: string): T => {
    const result = schema.safeParse(value);
    if (!result.success) throw fail(message, field);
    return result.data;
  };
  /** The re-authentication fields of a form (`password`, `code`), read by the API's own proof schema; empty = not sent. */
  // An empty proof where one is needed is the service's 403 reauthentication_required, shown on the page.
  const proofOf = (schema: typeof optionalProofBody, fields: { password?: string; code?: string }) =>
    checked(
      schema,
      Object.fromEntries(Object.entries(fields).filter(([, v]) => typeof v === 'string' && v.trim() !== '')),
      currentT().pageErrors.validation_error,
    ).proof;
  const proofFields = { password: text(1024) };

  const identityIdField = z.object({ identity_id: text(64) });

  return declareRouter(deps, [
    route(
      {
        ...PAGE,
        method: 'get',
        path: '/account',
        summary: 'Account page',
        auth: 'browser',
        query: contextQuery,
        response: { description: 'HTML page', kind: 'html' },
      },
      async ({ principal, query, ctx }, req) => {
        if (!principal || principal.clientId) return signInFirst();
        return render(ctx, req, principal, query, 200);
      },
    ),

    action(
      'profile',
      'Save name (form post)',
      'profile',
      z.object({ first_name: text(200), last_name: text(200) }),
      async (ctx, principal, body, req) => {
        const { t } = pageEnvOf(req);
        const firstName = checked(nameField('First name'), body.first_name, t.pageErrors.nameInvalid(NAME_MAX_CHARACTERS));
        const lastName = checked(nameField('Last name'), body.last_name, t.pageErrors.nameInvalid(NAME_MAX_CHARACTERS), 'last_name');
        await auth.updateProfile(ctx, principal, { firstName, lastName });
        return { done: 'profile' };
      },
    ),

    action(
      'password',
      'Change password (form post)',
      'password',
      z.object({ current_password: text(1024), new_password: text(1024), new_password_confirm: text(1024) }),
      async (ctx, principal, body, req) => {
        const { t } = pageEnvOf(req);
        if (!body.current_password) throw fail(t.pageErrors.currentPasswordMissing);
        const newPassword = checked(passwordField, body.new_password, passwordProblem(t, body.new_password), 'new_password');
        if (newPassword !== body.new_password_confirm) throw fail(t.pageErrors.newPasswordsDiffer, 'new_password_confirm');
        await account.changePassword(ctx, principal, { currentPassword: body.current_password, newPassword });
        return { done: 'password' };
      },
      (t) => ({
        invalid_credentials: t.pageErrors.currentPasswordWrong,
        reauthentication_failed: t.pageErrors.currentPasswordWrong,
      }),
    ),

    action(
      'sessions/revoke',
      'Sign out one session (form post)',
      'sessions',
      z.object({ session_id: text(64) }),
      async (ctx, principal, body) => {
        if (!UUID_PATTERN.test(body.session_id)) throw new AppError('not_found', 'That session does not exist or has ended');
        const { current } = await account.revokeOwnSession(ctx, principal, body.session_id);
        return current ? new Redirect('/logout').withCookies(...clearedSessionCookies(config)) : { done: 'session' };
      },
      (t) => ({ not_found: t.pageErrors.sessionGone }),
    ),

    action('sessions/revoke-others', 'Sign out every other session (form post)', 'sessions', z.object({}), async (ctx, principal) => {
      await account.revokeOtherSessions(ctx, principal);
      return { done: 'others' };
    }),

    // CONTRACT §16 + §11: linking adds a way to sign in, so it is a CSRF-protected post from a recent sign-in (else sign in again).
    action(
      'identities/link',
      'Link a sign-in of another provider (form post)',
      'identities',
      z.object({ slug: text(64) }),
      async (ctx, principal, body, req) => {
        const session = await account.findOwnSession(ctx, principal);
        if (!session || !mayLinkFromSession(session.authTime, ctx.clock.now())) {
          return new Redirect(`/login?${new URLSearchParams({ return_to: `${config.baseUrl}/account#identities` })}`);
        }
        try {
          const browser = browserTokenCookie(req, config);
          const url = await startFederatedSignIn(ctx, body.slug, {
            browserToken: browser.value,
            link: { userId: principal.userId, sessionId: session.id },
          });
          return new Redirect(url).withCookies(browser);
        } catch (err) {
          // The provider could not be reached: said in the section (FederationRefused, 502), like any other refusal.
          if (err instanceof FederationRefused) throw new FederationRefused(err.reason, err.providerName, 400);
          throw err;
        }
      },
    ),

    action(
      'identities/remove',
      'Unlink a sign-in of another provider (form post)',
      'identities',
      identityIdField,
      async (ctx, principal, body) => {
        await unlinkOwnIdentity(ctx, principal.userId, body.identity_id);
        return { done: 'identity_unlinked' };
      },
      (t) => ({ conflict: t.federation.lastWay }),
    ),

    action(
      'apps/remove',
      "Remove an app's access (form post)",
      'apps',
      z.object({ client_id: text(200) }),
      async (ctx, principal, body) => {
        await disconnectApp(ctx, principal.userId, body.client_id);
        return { done: 'app' };
      },
      (t) => ({ not_found: t.pageErrors.appGone }),
    ),

    // CONTRACT §15: the same service as POST /api/auth/verify-email/resend (a no-op once the address is confirmed).
    action('verification/resend', 'Send the confirmation email again (form post)', 'profile', z.object({}), async (ctx, principal) => {
      await links.requestVerificationResend(ctx, principal.email);
      return { done: 'verification' };
    }),

    action(
      'totp/setup',
      'Start authenticator app setup (form post)',
      'second-factors',
      z.object(proofFields),
      async (ctx, principal, body, req) => {
        await totp.setupTotp(ctx, principal, proofOf(optionalProofBody, body), requestMeta(req));
        return { done: 'totp_setup' };
      },
      (t) => ({ conflict: t.pageErrors.totpAlreadyOn }),
    ),

    action(
      'totp/confirm',
      'Turn on the authenticator app (form post)',
      'second-factors',
      z.object({ code: text(16), ...proofFields }),
      async (ctx, principal, body, req) => {
        const proof = proofOf(optionalProofBody, { password: body.password });
        const recoveryCodes = await totp.confirmTotp(ctx, principal, body.code.trim(), proof, requestMeta(req));
        return { show: { recoveryCodes, notice: pageEnvOf(req).t.accountNotices.totp_on } };
      },
      (t) => ({
        conflict: t.pageErrors.totpNotStarted,
        invalid_credentials: t.pageErrors.codeInvalid,
        validation_error: t.pageErrors.codeInvalid,
      }),
    ),

    action(
      'totp/remove',
      'Remove the authenticator app (form post)',
      'second-factors',
      z.object({ code: text(16), ...proofFields }),
      async (ctx, principal, body, req) => {
        // The form offers both fields: a code, when typed, is the proof.
        const proof = body.code.trim() ? { code: body.code } : { password: body.password };
        await totp.removeTotp(ctx, principal, proofOf(optionalProofBody, proof), requestMeta(req));
        return { done: 'totp_removed' };
      },
      (t) => ({ not_found: t.pageErrors.totpNone }),
    ),

    action(
      'recovery-codes',
      'Make new recovery codes (form post)',
      'second-factors',
      z.object({ code: text(16), ...proofFields }),
      async (ctx, principal, body, req) => {
        const proof = body.code.trim() ? { code: body.code } : { password: body.password };
        const recoveryCodes = await regenerateRecoveryCodes(ctx, principal, proofOf(optionalProofBody, proof), requestMeta(req));
        return { show: { recoveryCodes, notice: pageEnvOf(req).t.accountNotices.codes_made } };
      },
      (t) => ({ conflict: t.pageErrors.needFactorFirst }),
    ),

    action(
      'passkeys',
      'Add a passkey (form post of the page script)',
      'second-factors',
      z.object({ response: text(65536), name: text(200), ...proofFields }),
      async (ctx, principal, body, req) => {
        const { t } = pageEnvOf(req);
        let parsed: unknown;
        try {
          parsed = JSON.parse(body.response);
        } catch {
          throw fail(t.pageErrors.passkeyNotCreated);
        }
        const response = checked(registrationResponseField, parsed, t.pageErrors.passkeyNotCreated);
        const name = checked(passkeyNameField, body.name, t.pageErrors.passkeyName, 'passkey_name');
        const proof = proofOf(optionalProofBody, body);
        const created = await passkeys.registerPasskey(ctx, principal, { response, name }, proof, requestMeta(req));
        // The account's first factor comes with its recovery codes (CONTRACT §11), shown once like after TOTP setup.
        if (created.recoveryCodes)
          return { show: { recoveryCodes: created.recoveryCodes, notice: pageEnvOf(req).t.accountNotices.passkey } };
        return { done: 'passkey' };
      },
      (t) => ({ validation_error: t.pageErrors.passkeyNotVerified, conflict: t.pageErrors.passkeyDuplicate }),
    ),

    action(
      'passkeys/rename',
      'Rename a passkey (form post)',
      'second-factors',
      z.object({ id: text(64), name: text(200) }),
      async (ctx, principal, body, req) => {
        if (!UUID_PATTERN.test(body.id)) throw new AppError('not_found', 'Passkey not found');
        // The API's rule (mfa.schemas.ts), not a second spelling of it.
        const name = checked(passkeyNewNameField, body.name, pageEnvOf(req).t.pageErrors.passkeyName, `rename-${body.id}`);
        await passkeys.renameOwnPasskey(ctx, principal, body.id, name, requestMeta(req));
        return { done: 'passkey_renamed' };
      },
      (t) => ({ not_found: t.pageErrors.passkeyGone }),
    ),

    action(
      'passkeys/remove',
      'Remove a passkey (form post)',
      'second-factors',
      z.object({ id: text(64), ...proofFields }),
      async (ctx, principal, body, req) => {
        if (!UUID_PATTERN.test(body.id)) throw new AppError('not_found', 'Passkey not found');
        await passkeys.removePasskey(ctx, principal, body.id, proofOf(optionalProofBody, body), requestMeta(req));
        return { done: 'passkey_removed' };
      },
      (t) => ({ not_found: t.pageErrors.passkeyGone }),
    ),
  ]);
}
