import type { PageEnv } from '../../middleware/page-env';
import type { CookieOptions, Request } from 'express';
import type { Config } from '../../config';
import { AppError } from '../../errors';
import { randomToken } from '../../lib/crypto';
import { hostCookieName, hostCookieOptions } from '../../middleware/host-cookies';
import { Redirect, setCookie, type CookieWrite } from '../../http/outcome';
import { listOwnIdentities, unlinkOwnIdentity } from '../../services/federation/identities.service';
import { listEnabledProviders } from '../../services/federation/providers.service';
import { callbackUrlOf } from '../../services/federation/relying-party';
import { completeFederatedSignIn, FederationRefused, startFederatedSignIn } from '../../services/federation/sign-in.service';
import { signInTargetOf } from '../../services/oauth/sign-in-context';
import { renderOAuthErrorPage } from '../../views/consent';
import { hostedPage, renderPageOutcome, type HostedPage } from '../pages/page-kit';
import { finishSignIn, IDP_LINK_COOKIE, secondStepPage } from '../pages/sign-in-flow';
import { declareRouter, route } from '../route';
import { rawQueryOf, requestMeta } from '../shared';
import type { RouteDeps } from '../types';
import { presentIdentity, presentPublicProvider } from './federation.presenters';
import {
  identitiesBody,
  identityParams,
  publicProvidersBody,
  slugParams,
  startQuery,
} from '../../wire/federation/identity-providers.schemas';

/**
 * Binds a round trip to the browser that started it: random, HttpOnly (CONTRACT §16). With COOKIE_SECURE it is
 * `__Host-idp_browser` (Path=/), which a sibling subdomain cannot plant (docs/security.md, "Cookies a sibling cannot
 * plant"); without it, the plain `idp_browser`, sent only to /api/auth/idp.
 */
export const IDP_BROWSER_COOKIE = 'idp_browser';
const COOKIE_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const ROUND_TRIP_MAX_AGE_MS = 600 * 1000;

function cookieOptions(config: Pick<Config, 'cookieSecure'>, path: string): CookieOptions {
  // SameSite=Lax: the provider sends the browser back with a top-level GET, which Lax cookies accompany.
  return { httpOnly: true, sameSite: 'lax', secure: config.cookieSecure, path, maxAge: ROUND_TRIP_MAX_AGE_MS };
}

export function cookieValue(req: Request, name: string): string | undefined {
  const value: unknown = req.cookies?.[name];
  return typeof value === 'string' && COOKIE_SHAPE.test(value) ? value : undefined;
}

/** The name the browser binding has under this configuration. */
function browserCookieName(config: Pick<Config, 'cookieSecure'>): string {
  return hostCookieName(config, IDP_BROWSER_COOKIE) ?? IDP_BROWSER_COOKIE;
}

/** The binding value the callback compares: only the cookie of the name in use (a planted plain one counts for nothing). */
export function browserTokenOf(req: Request, config: Pick<Config, 'cookieSecure'>): string | undefined {
  return cookieValue(req, browserCookieName(config));
}

/**
 * The browser's binding value: reused while it lives, so two sign-ins started in two tabs both finish. With
 * COOKIE_SECURE only a value this host set itself can come back (`__Host-`); without it a sibling could plant any
 * value it knows, reused or not, which docs/security.md states.
 */
export function browserTokenCookie(req: Request, config: Config): CookieWrite & { value: string } {
  const name = hostCookieName(config, IDP_BROWSER_COOKIE);
  const value = browserTokenOf(req, config) ?? randomToken(32);
  if (name) return { name, value, options: hostCookieOptions(ROUND_TRIP_MAX_AGE_MS) };
  return { name: IDP_BROWSER_COOKIE, value, options: cookieOptions(config, '/api/auth/idp') };
}

const pendingLinkCookie = (config: Config, token: string): CookieWrite => setCookie(IDP_LINK_COOKIE, token, cookieOptions(config, '/'));

/** The browser leg answers people, not programs: a refusal is a page, in the request's language (`env`). */
function refusalPage({ t }: PageEnv, err: unknown): HostedPage {
  if (err instanceof FederationRefused) {
    const message = t.federation.refused[err.reason](err.providerName);
    return hostedPage(() => renderOAuthErrorPage({ title: t.federation.failedTitle, message }), err.status);
  }
  if (err instanceof AppError && err.code === 'not_found') {
    return hostedPage(() => renderOAuthErrorPage({ title: t.federation.unknownTitle, message: t.federation.unknown }), 404);
  }
  throw err;
}

/**
 * Signing in with other identity providers (CONTRACT §16): the public list, the browser round trip (start ->
 * provider -> callback) and the signed-in person's linked identities.
 */
export function createFederationRouter(deps: RouteDeps) {
  const { config } = deps.ctx;
  return declareRouter(
    deps,
    [
      route(
        {
          method: 'get',
          path: '/idp',
          summary: 'Enabled identity providers ("Continue with {name}")',
          auth: 'none',
          response: { description: '{ providers: [{ slug, name, type, start_url }] }', schema: publicProvidersBody },
        },
        async ({ ctx }) => ({ providers: (await listEnabledProviders(ctx)).map((p) => presentPublicProvider(config, p)) }),
      ),
      route(
        {
          method: 'get',
          path: '/idp/:slug/start',
          summary: 'Start signing in with a provider: 302 to its authorization endpoint (PKCE, state, nonce)',
          description:
            'Sets the browser-binding cookie the callback must see (`__Host-idp_browser` with COOKIE_SECURE, else `idp_browser`). `return_to` (allow-listed like /login) is where the browser goes ' +
            'after the sign-in.',
          auth: 'none',
          noStore: true,
          outcome: renderPageOutcome,
          params: slugParams,
          query: startQuery,
          response: { status: 302, description: 'Redirect to the provider (an HTML page when refused)', kind: 'redirect' },
          errors: [502],
        },
        async ({ params, query, ctx, env }, req) => {
          const binding = browserTokenCookie(req, config);
          try {
            const url = await startFederatedSignIn(ctx, params.slug, { returnTo: query.return_to, browserToken: binding.value });
            return new Redirect(url, undefined, 302).withCookies(binding);
          } catch (err) {
            return refusalPage(env, err).withCookies(binding);
          }
        },
      ),
      route(
        {
          method: 'get',
          path: '/idp/:slug/callback',
          summary: "The provider's redirect back: checks the answer, then signs in, asks the second factor, or asks to prove an account",
          auth: 'none',
          noStore: true,
          outcome: renderPageOutcome,
          params: slugParams,
          response: {
            status: 303,
            description: 'Redirect to return_to (or /login); the second-step page; an HTML page when refused',
            kind: 'redirect',
          },
        },
        async ({ params, ctx, env }, req) => {
          try {
            const outcome = await completeFederatedSignIn(
              ctx,
              params.slug,
              {
                callbackUrl: new URL(callbackUrlOf(config, params.slug) + rawQueryOf(req)),
                browserToken: browserTokenOf(req, config),
              },
              requestMeta(req),
            );
            switch (outcome.kind) {
              case 'signed_in':
                // Another upstream sign-in proves the account as well as a password would (a pending link completes).
                return await finishSignIn(ctx, req, outcome.result, outcome.returnTo);
              case 'second_factor':
                return secondStepPage(outcome, outcome.returnTo, await signInTargetOf(ctx, outcome.returnTo));
              case 'prove_account': {
                const { returnTo, email } = outcome;
                const query = new URLSearchParams({ ...(returnTo ? { return_to: returnTo } : {}), login_hint: email });
                return new Redirect(`/login?${query}`).withCookies(pendingLinkCookie(config, outcome.pendingLinkToken));
              }
              case 'linked':
                return new Redirect('/account?done=identity_linked#identities');
            }
          } catch (err) {
            return refusalPage(env, err);
          }
        },
      ),
      route(
        {
          method: 'get',
          path: '/identities',
          summary: 'Identities of other providers linked to the caller',
          auth: 'user',
          response: { description: '{ identities }', schema: identitiesBody },
        },
        async ({ principal, ctx }) => ({ identities: (await listOwnIdentities(ctx, principal.userId)).map(presentIdentity) }),
      ),
      route(
        {
          method: 'delete',
          path: '/identities/:id',
          summary: 'Unlink an identity (409 when it is the last way to sign in)',
          auth: 'user',
          params: identityParams,
          response: { status: 204, description: 'Unlinked', kind: 'empty' },
          errors: [409],
        },
        async ({ principal, params, ctx }) => {
          await unlinkOwnIdentity(ctx, principal.userId, params.id);
        },
      ),
    ],
    { tags: ['Identity providers'] },
  );
}
