import request from 'supertest';
import { makeClient, makeUser } from '../helpers/factories';
import { basicAuth, createListeningTestApp } from '../helpers/oauth';
import { loadEsm, signInAndApprove } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';

/**
 * Interop: Auth.js (@auth/core) with a `type: "oidc"` provider configured from the spec's discovery document
 * (/.well-known/oauth-authorization-server) with the default configuration and Auth.js's default scope
 * `openid profile email`, unchanged, as a Next.js/SvelteKit app would run it: sign-in POST -> our authorize -> hosted
 * login -> consent -> Auth.js callback (RFC 9207 iss checked, code exchange, id_token claims validated by Auth.js
 * through oauth4webapi: iss, aud, exp, nonce) -> Auth.js session. Then what an Auth.js app does by hand (its
 * documented patterns): userinfo with the access token, refresh-token rotation, and federated sign-out through
 * end_session_endpoint.
 *
 * `checks: ["pkce", "state", "nonce"]`: Auth.js sends PKCE only by default, but spec §4.3 makes `state` required on
 * every authorization request, so the provider must ask for it (docs/oidc.md says so).
 */
type AuthJs = typeof import('@auth/core', { with: { 'resolution-mode': 'import' } });
const { Auth } = loadEsm<AuthJs>('@auth/core');

const APP = 'http://localhost:8767';
const REDIRECT_URI = `${APP}/auth/callback/sso`;
const AFTER_LOGOUT = `${APP}/`;

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
});
afterAll(async () => {
  await stop();
});

/** The app's browser cookies (only what Auth.js sets on its own origin). */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  has(name: string): boolean {
    return this.cookies.has(name);
  }
}

test('Auth.js type "oidc": sign-in, session from the validated id_token, userinfo, refresh, federated sign-out', async () => {
  const user = await makeUser(t, { firstName: 'Auth', lastName: 'Js' });
  const rp = await makeClient(t, { redirectUris: [REDIRECT_URI], postLogoutRedirectUris: [AFTER_LOGOUT] });
  let account: Record<string, unknown> | undefined;
  const metadata = (await (await fetch(`${baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
  expect(metadata.issuer).toBe(baseUrl);
  const config = {
    secret: 'an-auth-js-secret-for-the-interop-test-0123456789',
    trustHost: true,
    basePath: '/auth',
    providers: [
      {
        id: 'sso',
        name: 'Company SSO',
        type: 'oidc' as const,
        // The spec's discovery document, read as an Auth.js app configures a provider from RFC 8414 metadata: its
        // issuer is what Auth.js then requires of the id_token's iss and of the RFC 9207 `iss` callback parameter.
        issuer: metadata.issuer,
        authorization: metadata.authorization_endpoint,
        token: metadata.token_endpoint,
        userinfo: metadata.userinfo_endpoint,
        clientId: rp.clientId,
        clientSecret: rp.clientSecret,
        checks: ['pkce' as const, 'state' as const, 'nonce' as const],
      },
    ],
    callbacks: {
      jwt({ token, account: signedIn }: { token: Record<string, unknown>; account?: Record<string, unknown> | null }) {
        if (signedIn) account = signedIn;
        return token;
      },
    },
  };
  const app = async (path: string, init: RequestInit = {}) => {
    const res = await Auth(
      new Request(`${APP}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), cookie: jar.header() } }),
      config,
    );
    jar.take(res);
    return res;
  };
  const jar = new CookieJar();

  const { csrfToken } = (await (await app('/auth/csrf')).json()) as { csrfToken: string };
  const signIn = await app('/auth/signin/sso', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrfToken, callbackUrl: `${APP}/dashboard` }).toString(),
  });
  expect(signIn.status).toBe(302);
  const authorizationUrl = new URL(signIn.headers.get('location')!);
  expect(authorizationUrl.href.startsWith(`${baseUrl}/api/oauth/authorize?`)).toBe(true);
  expect(authorizationUrl.searchParams.get('nonce')).toBeTruthy();

  const { callback, browser } = await signInAndApprove(baseUrl, authorizationUrl, user);
  expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
  const done = await app(callback.pathname + callback.search);
  expect(done.status).toBe(302);
  expect(done.headers.get('location')).toBe(`${APP}/dashboard`);
  expect(jar.has('authjs.session-token')).toBe(true);

  const session = (await (await app('/auth/session')).json()) as { user?: { name?: string; email?: string } };
  expect(session.user).toMatchObject({ name: 'Auth Js', email: user.email });
  expect(account).toMatchObject({ provider: 'sso', type: 'oidc', providerAccountId: user.id });
  const tokens = account as { access_token: string; refresh_token: string; id_token: string };

  const userinfo = await fetch(`${baseUrl}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  expect(await userinfo.json()).toMatchObject({ sub: user.id, email: user.email });

  // Auth.js's refresh-token rotation guide: the jwt callback posts the refresh_token to the token endpoint.
  const refreshed = await request(baseUrl)
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(rp.clientId, rp.clientSecret))
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
  expect(refreshed.status).toBe(200);
  expect(refreshed.body.id_token).toEqual(expect.any(String));

  // Federated sign-out: Auth.js ends its own session, then sends the browser to end_session_endpoint.
  const signOut = await app('/auth/signout', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrfToken }).toString(),
  });
  expect(signOut.status).toBe(302);
  expect(jar.has('authjs.session-token')).toBe(false);
  const endSession = `/api/oauth/logout?${new URLSearchParams({ id_token_hint: refreshed.body.id_token, post_logout_redirect_uri: AFTER_LOGOUT })}`;
  const loggedOut = await browser.get(endSession);
  expect(loggedOut.status).toBe(302);
  expect(loggedOut.headers.location).toBe(AFTER_LOGOUT);
  expect((await browser.get('/api/auth/me')).status).toBe(401);
  const afterLogout = await request(baseUrl)
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(rp.clientId, rp.clientSecret))
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token });
  expect(afterLogout.body.error).toBe('invalid_grant');
});
