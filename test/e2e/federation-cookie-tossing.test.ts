import request from 'supertest';
import { makeSignedInUser, uniqueEmail } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { addProvider, startUpstreamOidc, throughUpstream, type UpstreamOidc } from '../helpers/upstream';

/**
 * Login CSRF through a provider's callback by cookie tossing (docs/security.md, "Cookies a sibling cannot plant"): an
 * attacker starts a sign-in in their own client, signs in upstream as themselves, and hands the callback URL to a
 * victim whose browser a sibling subdomain gave the attacker's binding value as a plain cookie. With COOKIE_SECURE the
 * binding is `__Host-idp_browser`, which no sibling can set: the callback refuses and signs nobody in. Supertest speaks
 * http, so the Secure cookie is carried by hand, as a browser would over https.
 */
let t: TestApp;
let upstream: UpstreamOidc;

beforeAll(async () => {
  t = await createTestApp({ env: { IDP_ALLOW_PRIVATE: 'true', COOKIE_SECURE: 'true' } });
  upstream = await startUpstreamOidc([`${t.config.baseUrl}/api/auth/idp/corp/callback`]);
  const admin = (await makeSignedInUser(t, ['super_admin'])).accessToken;
  await addProvider(t, admin, {
    type: 'oidc',
    issuer: upstream.issuer,
    client_id: upstream.clientId,
    client_secret: upstream.clientSecret,
    slug: 'corp',
    name: 'Corp SSO',
  });
});
afterAll(async () => {
  await upstream?.stop();
  await t?.close();
});

const setCookies = (res: request.Response): string[] => {
  const raw = res.headers['set-cookie'] as unknown;
  return Array.isArray(raw) ? (raw as string[]) : [];
};

async function attackerCallback(sub: string, cookie?: string) {
  upstream.accounts.set(sub, { sub, email: uniqueEmail('fed'), email_verified: true, given_name: 'Eve', family_name: 'Attacker' });
  upstream.signInAs(sub);
  const start = request(t.app).get('/api/auth/idp/corp/start');
  if (cookie) start.set('Cookie', cookie);
  const started = await start;
  expect(started.status).toBe(302);
  const line = setCookies(started).find((c) => c.startsWith('__Host-idp_browser='))!;
  const back = await throughUpstream(started.headers.location as string);
  return { line, value: /^__Host-idp_browser=([^;]*)/.exec(line)![1]!, callbackPath: back.pathname + back.search };
}

test('the binding is a __Host- cookie (Secure, Path=/, no Domain); no plain idp_browser is set', async () => {
  const { line } = await attackerCallback('upstream-shape');
  expect(line).toMatch(/; Secure/);
  expect(line).toMatch(/; Path=\/;/);
  expect(line).toMatch(/HttpOnly/);
  expect(line).not.toMatch(/Domain=/i);
});

test('the victim’s browser with the attacker’s value planted as a plain cookie is refused and not signed in', async () => {
  const { value, callbackPath } = await attackerCallback('upstream-eve');
  const victim = await request(t.app).get(callbackPath).set('Cookie', `idp_browser=${value}`);
  expect(victim.status).toBe(400);
  expect(setCookies(victim).some((c) => c.startsWith('accessToken=') || c.startsWith('refreshToken='))).toBe(false);
  // The attacker's own browser, which holds the __Host- cookie, still finishes (the refusal burnt nothing).
  const own = await request(t.app).get(callbackPath).set('Cookie', `__Host-idp_browser=${value}`);
  expect(own.status).toBe(303);
  expect(setCookies(own).some((c) => c.startsWith('accessToken='))).toBe(true);
});

test('a plain idp_browser value sent at the start is not reused', async () => {
  const chosen = 'E'.repeat(43);
  const { value } = await attackerCallback('upstream-chosen', `idp_browser=${chosen}`);
  expect(value).not.toBe(chosen);
});
