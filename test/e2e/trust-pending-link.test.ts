import request from 'supertest';
import { makeClient, makeSignedInUser, makeUser, uniqueEmail } from '../helpers/factories';
import { authorizeParams } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { addProvider, startAndAuthorize, startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream';

/**
 * Issue 30 (mid-session review, low): a pending federation link (the `idp_link` cookie, CONTRACT §16) planted by a
 * sibling subdomain was completed at the victim's next sign-in without any confirmation, linking the attacker's
 * upstream account. Now signing in never links: the person is shown the link (provider and upstream account) on a
 * CSRF-protected page, and only its "Link" post links; "Don't link" discards it.
 */
let t: TestApp;
let upstream: UpstreamOidc;

beforeAll(async () => {
  t = await createTestApp({ env: { IDP_ALLOW_PRIVATE: 'true' } });
  upstream = await startUpstreamOidc([`${t.config.baseUrl}/api/auth/idp/corp/callback`]);
  const admin = await makeSignedInUser(t, ['super_admin']);
  await addProvider(t, admin.accessToken, {
    slug: 'corp',
    name: 'Corp SSO',
    type: 'oidc',
    issuer: upstream.issuer,
    client_id: upstream.clientId,
    client_secret: upstream.clientSecret,
  });
});
afterAll(async () => {
  await upstream?.stop();
  await t?.close();
});

let n = 0;
/** The attacker signs in upstream with an account asserting the victim's address: a pending link for the victim. */
async function plantablePendingLink(victimEmail: string): Promise<{ token: string; sub: string }> {
  const sub = `attacker-${++n}`;
  upstream.accounts.set(sub, { sub, email: victimEmail, email_verified: true });
  upstream.signInAs(sub);
  const attacker = request.agent(t.app);
  const { callbackPath } = await startAndAuthorize(attacker, 'corp');
  const res = await attacker.get(callbackPath);
  expect(res.headers.location).toMatch(/^\/login\?/);
  const cookie = (res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('idp_link='))!;
  return { token: /^idp_link=([^;]+)/.exec(cookie)![1]!, sub };
}

/** The victim's browser, carrying the planted cookie, signs in with the password. */
async function victimSignsIn(victim: { email: string; password: string }, token: string, returnTo?: string) {
  const browser = request.agent(t.app);
  // What a sibling subdomain can do: set a cookie this host receives.
  browser.jar.setCookie(`idp_link=${token}; Path=/`, '127.0.0.1', '/');
  const login = await browser.get(`/login${returnTo ? `?${new URLSearchParams({ return_to: returnTo })}` : ''}`);
  const csrf = /name="csrf" value="([^"]+)"/.exec(login.text)![1];
  const signedIn = await browser
    .post('/login')
    .type('form')
    .send({ email: victim.email, password: victim.password, csrf, ...(returnTo ? { return_to: returnTo } : {}) });
  expect(signedIn.status).toBe(303);
  return { browser, signedIn };
}

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
const identitiesOf = (userId: string) => t.db('user_identities').where({ user_id: userId });

test('signing in with a planted pending link links nothing; the confirmation page names the provider and the upstream account', async () => {
  const victim = await makeUser(t, { email: uniqueEmail('victim') });
  const { token, sub } = await plantablePendingLink(victim.email);
  const client = await makeClient(t, { redirectUris: ['https://wiki.test/callback'] });
  const returnTo = `${t.config.baseUrl}/api/oauth/authorize?${new URLSearchParams(authorizeParams(client).params)}`;
  const { browser, signedIn } = await victimSignsIn(victim, token, returnTo);

  expect(signedIn.headers.location).toBe(`/login/link?${new URLSearchParams({ return_to: returnTo })}`);
  expect(await identitiesOf(victim.id)).toHaveLength(0);
  expect((await browser.get('/api/auth/me')).body.user.id).toBe(victim.id);

  const page = await browser.get(signedIn.headers.location);
  expect(page.status).toBe(200);
  expect(page.text).toContain(`Link Corp SSO account ${victim.email} to your account?`);
  expect(page.text).toContain(`Account ID at the provider: ${sub}`);
  expect(page.text).toContain('name="decision" value="link"');
  expect(page.text).toContain('name="decision" value="cancel"');
  // Both buttons end where the sign-in was going: the authorization's redirect URI (CSP form-action).
  expect(page.headers['content-security-policy']).toContain("form-action 'self' https://wiki.test;");

  const de = await browser.get(signedIn.headers.location).set('Accept-Language', 'de');
  expect(de.text).toContain(`Corp SSO-Konto ${victim.email} mit Ihrem Konto verknüpfen?`);
});

test('"Don\'t link" discards the pending link for good and goes on to return_to; the cookie is cleared', async () => {
  const victim = await makeUser(t, { email: uniqueEmail('victim') });
  const { token } = await plantablePendingLink(victim.email);
  const client = await makeClient(t, { redirectUris: ['https://wiki.test/callback'] });
  const returnTo = `${t.config.baseUrl}/api/oauth/authorize?${new URLSearchParams(authorizeParams(client).params)}`;
  const { browser, signedIn } = await victimSignsIn(victim, token, returnTo);
  const page = await browser.get(signedIn.headers.location);

  const cancelled = await browser
    .post('/login/link')
    .type('form')
    .send({ csrf: csrfOf(page.text), return_to: returnTo, decision: 'cancel' });
  expect(cancelled.status).toBe(303);
  expect(cancelled.headers.location).toBe(returnTo);
  expect((cancelled.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('idp_link='))).toMatch(
    /Expires=Thu, 01 Jan 1970/,
  );
  expect(await identitiesOf(victim.id)).toHaveLength(0);
  expect(await t.db('idp_pending_links').where({ user_id: victim.id })).toHaveLength(0);

  // The same token planted again links nothing and asks nothing.
  const again = await victimSignsIn(victim, token);
  expect(again.signedIn.headers.location).toBe('/login');
  const post = await again.browser.get('/login');
  const late = await again.browser
    .post('/login/link')
    .type('form')
    .send({ csrf: csrfOf(post.text), decision: 'link' });
  expect(late.status).toBe(303);
  expect(await identitiesOf(victim.id)).toHaveLength(0);
});

test('only a CSRF-protected post links: without the field 403 and nothing linked; "Link" links, mails and audits', async () => {
  const user = await makeUser(t, { email: uniqueEmail('owner') });
  const { token, sub } = await plantablePendingLink(user.email);
  const { browser, signedIn } = await victimSignsIn(user, token);
  expect(signedIn.headers.location).toBe('/login/link');

  const forged = await browser.post('/login/link').type('form').send({ decision: 'link' });
  expect(forged.status).toBe(403);
  expect(await identitiesOf(user.id)).toHaveLength(0);

  const page = await browser.get('/login/link');
  const linked = await browser
    .post('/login/link')
    .type('form')
    .send({ csrf: csrfOf(page.text), decision: 'link' });
  expect(linked.status).toBe(303);
  expect(linked.headers.location).toBe('/account?done=identity_linked#identities');
  expect(await identitiesOf(user.id)).toEqual([expect.objectContaining({ subject: sub })]);
  expect(t.mails.find((m) => m.to === user.email)?.subject).toBe('Corp SSO was linked to your account');
  await t.ctx.events.idle?.();
  const [audit] = await t.db('audit_events').where({ type: 'auth.identity.linked', subject_id: user.id });
  expect(audit.detail).toMatchObject({ via: 'sign_in_proof' });
});

test('a pending link waiting for another account asks nothing; signed out, the page sends to sign in first', async () => {
  const owner = await makeUser(t, { email: uniqueEmail('owner') });
  const other = await makeUser(t, { email: uniqueEmail('other') });
  const { token } = await plantablePendingLink(owner.email);
  const { browser, signedIn } = await victimSignsIn(other, token);
  expect(signedIn.headers.location).toBe('/login');
  expect((await browser.get('/login/link')).headers.location).toBe('/login');

  const signedOut = await request(t.app).get('/login/link');
  expect(signedOut.status).toBe(303);
  expect(signedOut.headers.location).toBe(`/login?${new URLSearchParams({ return_to: `${t.config.baseUrl}/login/link` })}`);
  expect(await identitiesOf(owner.id)).toHaveLength(0);
  expect(await identitiesOf(other.id)).toHaveLength(0);
});
