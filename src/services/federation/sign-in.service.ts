import { randomUUID } from 'node:crypto';
import { withTransaction } from '../../db';
import { isUniqueViolation } from '../../db/pg-errors';
import {
  findIdentityProviderById,
  findIdentityProviderBySlug,
  type IdentityProviderRow,
} from '../../db/repositories/identity-providers.repo';
import {
  consumeIdpFlow,
  consumePendingLink,
  discardPendingLink,
  findLivePendingLink,
  insertIdpFlow,
  insertPendingLink,
} from '../../db/repositories/idp-flows.repo';
import { listRolesHeldByUser } from '../../db/repositories/roles.repo';
import { findSessionById } from '../../db/repositories/sessions.repo';
import { findIdentity, insertIdentity, useIdentity, type IdentityKey } from '../../db/repositories/user-identities.repo';
import { findUserByEmail, findUserById, insertUser, type UserRow } from '../../db/repositories/users.repo';
import { AppError } from '../../errors';
import { addSeconds } from '../../lib/clock';
import { randomToken, sha256Hex } from '../../lib/crypto';
import { isSingleEmailAddress } from '../../lib/email-address';
import { openIdClient } from '../../lib/openid-client';
import type { AuthResult } from '../auth.service';
import { normalizeEmail } from '../auth.service';
import type { RequestMeta, ServiceContext } from '../context';
import { sendVerificationEmail } from '../email-links.service';
import { loadFactors, methodsOf, type SecondFactorMethod } from '../mfa/factors.service';
import { startSecondStep } from '../mfa/mfa-token';
import { mailIdentityLinked } from '../mfa/notifications';
import { AMR } from '../mfa/policy';
import { resolveReturnTo } from '../oauth/return-to';
import { completeSignIn } from '../sessions.service';
import { confirmFlaggedIdentity } from './identities.service';
import { decideLinking, isPrivilegedAccount, REFUSAL_MESSAGES, type LinkingRefusal } from './linking-policy';
import { authorizationUrlFor, exchangeCallback, UpstreamRejected, type UpstreamIdentity } from './relying-party';

/**
 * The browser round trip of CONTRACT §16: /api/auth/idp/:slug/start stores a single-use flow (state, nonce, PKCE
 * verifier, where to go after) bound to the browser by the hash of a random cookie, and sends the browser to the
 * provider; the callback consumes that flow with one conditional UPDATE, lets openid-client check the answer, then
 * applies the linking rules (linking-policy.ts).
 */

/** The round trip and a pending link live 10 minutes (like a pending authorization, CONTRACT §5). */
export const IDP_FLOW_TTL_SECONDS = 600;
export const PENDING_LINK_TTL_SECONDS = 600;

/** Refusals the person sees as a page (400); the log gets the precise reason. */
/** Why the browser leg refused: the stable key a page turns into a sentence of its language (CONTRACT §15). */
export type FederationRefusalReason = 'unreachable' | 'stale' | 'upstream_error' | 'unverified' | 'race' | LinkingRefusal;

/** The API's (and the log's) English sentence of each reason. */
const ENGLISH: Record<FederationRefusalReason, (provider: string) => string> = {
  unreachable: (p) => `${p} cannot be reached right now. Try again later or sign in another way.`,
  stale: () => 'This sign-in has expired, was already used, or was started in another browser. Start again from the sign-in page.',
  upstream_error: (p) => `The sign-in at ${p} did not complete. Start again from the sign-in page.`,
  unverified: (p) => `The answer from ${p} could not be verified. Start again from the sign-in page.`,
  race: () => 'An account for this identity was created at the same moment. Start again from the sign-in page.',
  inactive: () => REFUSAL_MESSAGES.inactive,
  no_email: () => REFUSAL_MESSAGES.no_email,
  invalid_email: () => REFUSAL_MESSAGES.invalid_email,
  signup_closed: () => REFUSAL_MESSAGES.signup_closed,
  linked_elsewhere: () => REFUSAL_MESSAGES.linked_elsewhere,
  unconfirmed: () => REFUSAL_MESSAGES.unconfirmed,
};

export class FederationRefused extends AppError {
  constructor(
    readonly reason: FederationRefusalReason,
    readonly providerName: string,
    status = 400,
  ) {
    super('validation_error', ENGLISH[reason](providerName), { status });
    this.name = 'FederationRefused';
  }
}

/**
 * The issuer part of an identity's key (CONTRACT §23): an OpenID provider's issuer, a GitHub provider's base URL. An
 * identity linked under another value (the provider's issuer was changed since) is a different identity.
 */
export function identityIssuerOf(provider: Pick<IdentityProviderRow, 'type' | 'issuer' | 'baseUrl'>): string {
  return (provider.type === 'github' ? provider.baseUrl : provider.issuer) ?? '';
}

/**
 * The facts `isPrivilegedAccount` judges: every global role the account holds, assigned or through a SCIM group (the
 * live lookup's rule), deactivated ones included (a role reactivated later would hand its rights to whoever was
 * linked meanwhile), and the permissions they carry.
 */
async function accountHoldsAdminRights(ctx: ServiceContext, userId: string): Promise<boolean> {
  const roles = (await listRolesHeldByUser(ctx.db, userId)).filter((r) => r.application === null);
  return isPrivilegedAccount({ roles, permissions: roles.flatMap((r) => r.permissions) });
}

/** Whether the session that began a link from /account is still live and the account's (else nothing is linked). */
async function linkSessionIsLive(ctx: ServiceContext, userId: string, sessionId: string | null, now: Date): Promise<boolean> {
  const session = sessionId ? await findSessionById(ctx.db, sessionId) : undefined;
  return session?.userId === userId && session.revokedAt === null && session.expiresAt > now;
}

async function enabledProvider(ctx: ServiceContext, slug: string): Promise<IdentityProviderRow> {
  const provider = await findIdentityProviderBySlug(ctx.db, slug);
  if (!provider?.enabled) throw new AppError('not_found', 'Identity provider not found');
  return provider;
}

/**
 * GET /api/auth/idp/:slug/start: the provider's authorization URL. `browserToken` is the browser's random cookie
 * (only its hash is stored); `linkUserId` and `linkSessionId` are set when a signed-in person links the identity from /account: the link
 * completes only while that session is live (a sign-out or a take-back meanwhile stops it).
 */
export async function startFederatedSignIn(
  ctx: ServiceContext,
  slug: string,
  input: { returnTo?: string; browserToken: string; link?: { userId: string; sessionId: string } },
): Promise<string> {
  const provider = await enabledProvider(ctx, slug);
  const client = openIdClient();
  const round = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
  const url = await authorizationUrlFor(ctx, provider, round).catch((err: unknown) => {
    ctx.logger.warn({ provider: provider.slug, reason: (err as Error).message }, 'identity provider unreachable at sign-in start');
    throw new FederationRefused('unreachable', provider.name, 502);
  });
  const now = ctx.clock.now();
  await insertIdpFlow(ctx.db, {
    stateHash: sha256Hex(round.state),
    browserHash: sha256Hex(input.browserToken),
    providerId: provider.id,
    codeVerifierSealed: ctx.sealer.seal(round.codeVerifier, 'idp-flow'),
    nonce: round.nonce,
    // Open-redirect defence: only an allow-listed destination is kept (CONTRACT §5 return_to rules).
    returnTo: resolveReturnTo(ctx.config, input.returnTo) ?? null,
    linkUserId: input.link?.userId ?? null,
    linkSessionId: input.link?.sessionId ?? null,
    now,
    expiresAt: addSeconds(now, IDP_FLOW_TTL_SECONDS),
  });
  return url;
}

export type CallbackOutcome =
  | { kind: 'signed_in'; result: AuthResult; returnTo?: string }
  | { kind: 'second_factor'; mfaToken: string; methods: SecondFactorMethod[]; returnTo?: string }
  | { kind: 'prove_account'; pendingLinkToken: string; email: string; providerName: string; returnTo?: string }
  | { kind: 'linked'; providerName: string };

function nameParts(identity: UpstreamIdentity, email: string): { firstName: string; lastName: string } {
  // CONTRACT §8 names: one line, no control characters, at most 100 characters.
  const clean = (s: string | undefined) =>
    (s ?? '')
      .replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 100);
  let firstName = clean(identity.givenName);
  let lastName = clean(identity.familyName);
  if (!firstName && !lastName && identity.name) {
    const [first, ...rest] = clean(identity.name).split(' ');
    firstName = first ?? '';
    lastName = rest.join(' ').slice(0, 100);
  }
  if (!firstName && !lastName) firstName = clean(email.split('@')[0]);
  return { firstName, lastName };
}

/**
 * GET /api/auth/idp/:slug/callback. Throws FederationRefused for anything that must sign nobody in: an unknown,
 * replayed, expired or foreign-browser state, an error from the provider, an answer openid-client rejects (issuer,
 * audience, signature, nonce, PKCE), or a linking rule.
 */
export async function completeFederatedSignIn(
  ctx: ServiceContext,
  slug: string,
  input: { callbackUrl: URL; browserToken: string | undefined },
  meta: RequestMeta,
): Promise<CallbackOutcome> {
  const provider = await enabledProvider(ctx, slug);
  const state = input.callbackUrl.searchParams.get('state');
  const now = ctx.clock.now();
  const flow =
    state && input.browserToken
      ? await consumeIdpFlow(ctx.db, {
          stateHash: sha256Hex(state),
          browserHash: sha256Hex(input.browserToken),
          providerId: provider.id,
          now,
        })
      : undefined;
  if (!flow || !state) {
    await ctx.events.record(ctx.db, { type: 'auth.login.failed', actorId: null, detail: { provider: slug, reason: 'idp_state' } });
    throw new FederationRefused('stale', provider.name);
  }
  if (flow.linkUserId && !(await linkSessionIsLive(ctx, flow.linkUserId, flow.linkSessionId, now))) {
    await ctx.events.record(ctx.db, {
      type: 'auth.login.failed',
      actorId: null,
      subjectId: flow.linkUserId,
      detail: { provider: slug, reason: 'idp_link_session' },
    });
    throw new FederationRefused('stale', provider.name);
  }
  const returnTo = flow.returnTo ?? undefined;
  const upstreamError = input.callbackUrl.searchParams.get('error');
  if (upstreamError) {
    await ctx.events.record(ctx.db, {
      type: 'auth.login.failed',
      actorId: null,
      detail: { provider: slug, reason: 'idp_error', idp_error: upstreamError.slice(0, 64) },
    });
    throw new FederationRefused('upstream_error', provider.name);
  }
  let identity: UpstreamIdentity;
  try {
    identity = await exchangeCallback(ctx, provider, input.callbackUrl, {
      state,
      nonce: flow.nonce,
      codeVerifier: ctx.sealer.open(flow.codeVerifierSealed, 'idp-flow'),
    });
  } catch (err) {
    if (!(err instanceof UpstreamRejected)) throw err;
    ctx.logger.warn({ provider: slug, reason: err.message, code: err.code }, 'identity provider answer rejected');
    await ctx.events.record(ctx.db, {
      type: 'auth.login.failed',
      actorId: null,
      detail: { provider: slug, reason: 'idp_answer_rejected', check: err.code ?? null },
    });
    throw new FederationRefused('unverified', provider.name);
  }

  // CONTRACT §23: an email claim is used only when it is exactly one valid address, as sent.
  const emailMalformed = identity.email !== undefined && !isSingleEmailAddress(identity.email);
  const email = identity.email && !emailMalformed ? normalizeEmail(identity.email) : undefined;
  const key: IdentityKey = { providerId: provider.id, issuer: identityIssuerOf(provider), subject: identity.subject };
  const linked = emailMalformed ? undefined : await useIdentity(ctx.db, key, now);
  const linkedUser = linked ? await findUserById(ctx.db, linked.userId) : undefined;
  const emailUser = email && !linked ? await findUserByEmail(ctx.db, email) : undefined;
  const decision = decideLinking({
    linkedUser: linkedUser && { ...linkedUser, needsConfirmation: linked?.needsConfirmation },
    emailUser: emailUser && {
      id: emailUser.id,
      isActive: emailUser.isActive,
      emailVerified: emailUser.emailVerified,
      privileged: await accountHoldsAdminRights(ctx, emailUser.id),
    },
    email,
    emailMalformed,
    emailVerified: identity.emailVerified,
    provider: { trustEmail: provider.trustEmail, allowSignup: provider.allowSignup },
    registrationOpen: ctx.settings.current.values.registration === 'open',
    linkToUserId: flow.linkUserId ?? undefined,
  });

  switch (decision.action) {
    case 'refuse':
      await ctx.events.record(ctx.db, {
        type: 'auth.login.failed',
        actorId: null,
        subjectId: linkedUser?.id ?? emailUser?.id ?? null,
        detail: { provider: slug, reason: decision.reason },
      });
      if (decision.reason === 'invalid_email') {
        ctx.logger.warn({ provider: slug }, 'identity provider asserted an email claim that is not a single valid address');
      }
      throw new FederationRefused(decision.reason, provider.name, 403);
    case 'link_to_current': {
      if (!decision.alreadyLinked) await linkIdentity(ctx, decision.userId, provider, key, email, 'account');
      // The owner, signed in, has just signed in upstream as this flagged identity: it is theirs, it signs in again.
      else if (linked?.needsConfirmation) await confirmFlaggedIdentity(ctx, decision.userId, linked.id);
      return { kind: 'linked', providerName: provider.name };
    }
    case 'prove_account': {
      // The policy refuses no_email before it asks for a proof; said again here for the compiler.
      if (!email) throw new FederationRefused('no_email', provider.name, 403);
      const token = randomToken(32);
      await insertPendingLink(ctx.db, {
        tokenHash: sha256Hex(token),
        userId: decision.userId,
        providerId: provider.id,
        issuer: key.issuer,
        subject: identity.subject,
        email,
        now,
        expiresAt: addSeconds(now, PENDING_LINK_TTL_SECONDS),
      });
      return { kind: 'prove_account', pendingLinkToken: token, email, providerName: provider.name, returnTo };
    }
    case 'link_and_sign_in':
    case 'sign_in': {
      if (decision.action === 'link_and_sign_in') await linkIdentity(ctx, decision.userId, provider, key, email, 'verified_email');
      // A known identity signs in its linked user (read above); a new link, the account the email named.
      const user = linkedUser?.id === decision.userId ? linkedUser : await findUserById(ctx.db, decision.userId);
      if (!user) throw new FederationRefused('inactive', provider.name, 403);
      return signIn(ctx, user, provider, key, returnTo, meta);
    }
    case 'sign_up':
      if (!email) throw new FederationRefused('no_email', provider.name, 403);
      return signIn(ctx, await signUp(ctx, provider, identity, key, email, decision.emailVerified), provider, key, returnTo, meta);
  }
}

/**
 * The one way an identity is linked to an existing account (CONTRACT §16, §23): inserted and audited in one
 * transaction, then mailed to the account's address. The audit row's actor is the signed-in person who linked it
 * (from /account, or after proving the account); an automatic link (`verified_email`) was made by nobody signed in
 * to the account, so its actor is null and the row names the upstream identity instead.
 */
async function linkIdentity(
  ctx: ServiceContext,
  userId: string,
  provider: Pick<IdentityProviderRow, 'id' | 'slug' | 'name'>,
  key: IdentityKey,
  email: string | undefined,
  via: 'verified_email' | 'account' | 'sign_in_proof',
): Promise<void> {
  const linked = await withTransaction(ctx.db, async (trx) => {
    const row = await insertIdentity(trx, { ...key, id: randomUUID(), userId, email: email ?? null, now: ctx.clock.now() });
    // A concurrent callback linked it first: the unique (provider, issuer, subject) decided, nothing to record twice.
    if (!row) return false;
    await ctx.events.record(trx, {
      type: 'auth.identity.linked',
      actorId: via === 'verified_email' ? null : userId,
      subjectId: userId,
      detail: { provider: provider.slug, identity_id: row.id, via, upstream_subject: key.subject, upstream_email: email ?? null },
    });
    return true;
  });
  if (linked) {
    const user = await findUserById(ctx.db, userId);
    if (user) mailIdentityLinked(ctx, user, provider.name);
  }
}

/** A new account from an upstream identity: no password, email verified only when trusted (CONTRACT §16). */
async function signUp(
  ctx: ServiceContext,
  provider: IdentityProviderRow,
  identity: UpstreamIdentity,
  key: IdentityKey,
  email: string,
  emailVerified: boolean,
): Promise<UserRow> {
  const now = ctx.clock.now();
  const { firstName, lastName } = nameParts(identity, email);
  let created: { user: UserRow; identityId: string };
  try {
    created = await withTransaction(ctx.db, async (trx) => {
      const user = await insertUser(trx, { id: randomUUID(), email, firstName, lastName, passwordHash: null, emailVerified, now });
      const row = await insertIdentity(trx, { ...key, id: randomUUID(), userId: user.id, email, now });
      if (!row) throw new FederationRefused('stale', provider.name, 409);
      await ctx.events.record(trx, {
        type: 'user.created',
        actorId: user.id,
        subjectId: user.id,
        detail: { via: 'identity_provider', provider: provider.slug, email_verified: emailVerified },
      });
      await ctx.events.record(trx, {
        type: 'auth.identity.linked',
        actorId: user.id,
        subjectId: user.id,
        detail: { provider: provider.slug, identity_id: row.id, via: 'sign_up', upstream_subject: key.subject },
      });
      return { user, identityId: row.id };
    });
  } catch (err) {
    // Someone registered this address (or linked this identity) in the meantime: nothing was created.
    if (isUniqueViolation(err)) throw new FederationRefused('race', provider.name, 409);
    throw err;
  }
  const { user } = created;
  // The link is mailed like every other (CONTRACT §23); an unverified address also gets its verification link.
  mailIdentityLinked(ctx, user, provider.name);
  if (!emailVerified) await sendVerificationEmail(ctx, user);
  return user;
}

/** The account signs in with amr ["fed"], or gets the second step when it has a second factor (CONTRACT §10, §16). */
async function signIn(
  ctx: ServiceContext,
  user: UserRow,
  provider: IdentityProviderRow,
  key: IdentityKey,
  returnTo: string | undefined,
  meta: RequestMeta,
): Promise<CallbackOutcome> {
  if (!user.isActive) throw new FederationRefused('inactive', provider.name, 403);
  const methods = methodsOf(await loadFactors(ctx.db, user.id));
  if (methods.length > 0) {
    const mfaToken = await startSecondStep(
      ctx,
      user.id,
      meta,
      { methods, provider: provider.slug, upstream_subject: key.subject },
      AMR.federated,
    );
    return { kind: 'second_factor', mfaToken, methods, returnTo };
  }
  const now = ctx.clock.now();
  const tokens = await completeSignIn(ctx, ctx.db, {
    user,
    meta,
    auth: { time: now, amr: [AMR.federated] },
    event: { detail: { provider: provider.slug, upstream_subject: key.subject } },
  });
  return { kind: 'signed_in', result: { user: { ...user, lastLoginAt: now }, tokens }, returnTo };
}

/** The account and provider a pending link names (the sign-in page says which account to prove). */
export async function describePendingLink(
  ctx: ServiceContext,
  token: string,
): Promise<{ email: string; providerName: string } | undefined> {
  const link = await findLivePendingLink(ctx.db, sha256Hex(token), ctx.clock.now());
  if (!link) return undefined;
  const [user, provider] = await Promise.all([findUserById(ctx.db, link.userId), findIdentityProviderById(ctx.db, link.providerId)]);
  return user && provider ? { email: user.email, providerName: provider.name } : undefined;
}

/**
 * A pending link waiting for this very account, as its confirmation page names it: the provider and the upstream
 * account (the address it asserted and its subject). Undefined when the token is dead or waits for another account.
 */
export async function describePendingLinkFor(
  ctx: ServiceContext,
  token: string,
  userId: string,
): Promise<{ providerName: string; email?: string; subject: string } | undefined> {
  const link = await findLivePendingLink(ctx.db, sha256Hex(token), ctx.clock.now());
  if (!link || link.userId !== userId) return undefined;
  const provider = await findIdentityProviderById(ctx.db, link.providerId);
  return provider ? { providerName: provider.name, email: link.email ?? undefined, subject: link.subject } : undefined;
}

/** The person declined the pending link on its confirmation page: it can never complete. */
export async function declinePendingLink(ctx: ServiceContext, token: string, userId: string): Promise<boolean> {
  return discardPendingLink(ctx.db, sha256Hex(token), userId);
}

/**
 * After the person proved the account (password, passkey, second step, or another upstream sign-in) AND confirmed
 * the link on its own page (issue 30: a cookie planted by a sibling subdomain must not link silently): the pending
 * identity is linked, once, and only to the account it was waiting for. Returns whether a link was made.
 */
export async function completePendingLink(ctx: ServiceContext, token: string, userId: string): Promise<boolean> {
  const link = await consumePendingLink(ctx.db, sha256Hex(token), userId, ctx.clock.now());
  if (!link) return false;
  const provider = await findIdentityProviderById(ctx.db, link.providerId);
  // The provider's issuer changed since the identity was asserted: it is not the identity that was proved for.
  if (!provider || (link.issuer !== null && link.issuer !== identityIssuerOf(provider))) return false;
  const key: IdentityKey = { providerId: provider.id, issuer: identityIssuerOf(provider), subject: link.subject };
  const existing = await findIdentity(ctx.db, key);
  const decision = decideLinking({
    linkedUser: existing ? { id: existing.userId, isActive: true } : undefined,
    email: link.email ?? undefined,
    emailVerified: false,
    provider: { trustEmail: provider.trustEmail, allowSignup: provider.allowSignup },
    registrationOpen: ctx.settings.current.values.registration === 'open',
    linkToUserId: userId,
  });
  if (decision.action !== 'link_to_current' || decision.alreadyLinked) return false;
  await linkIdentity(ctx, userId, provider, key, link.email ?? undefined, 'sign_in_proof');
  return true;
}
