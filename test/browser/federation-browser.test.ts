import type { Server } from 'node:http';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeClient, makeSignedInUser, uniqueEmail } from '../helpers/factories';
import { authorizeParams, basicAuth, heldPort } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { addProvider, startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream';

/**
 * CONTRACT §16 in a real browser: an OAuth/OpenID authorization sends Chromium to /login, "Continue with Corp SSO"
 * goes through a real OpenID provider (node-oidc-provider on 127.0.0.1) and back, then consent and the client; the
 * tokens say amr ["fed"]. /account then lists the identity and refuses to unlink the last way to sign in.
 */
let t: TestApp;
let baseUrl: string;
let server: Server;
let browser: Browser;
let upstream: UpstreamOidc;

beforeAll(async () => {
  // The port is held from the start; the app answers on it once made.
  let port: number;
  ({ server, port } = await heldPort('127.0.0.1'));
  baseUrl = `http://localhost:${port}`;
  t = await createTestApp({ env: { BASE_URL: baseUrl, IDP_ALLOW_PRIVATE: 'true' } });
  server.on('request', t.app);
  upstream = await startUpstreamOidc([`${baseUrl}/api/auth/idp/corp/callback`]);
  const admin = await makeSignedInUser(t, ['super_admin']);
  await addProvider(t, admin.accessToken, {
    slug: 'corp',
    name: 'Corp SSO',
    type: 'oidc',
    issuer: upstream.issuer,
    client_id: upstream.clientId,
    client_secret: upstream.clientSecret,
  });
  browser = await launchChromium(['--host-resolver-rules=MAP localhost 127.0.0.1']);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await upstream?.stop();
  await t?.close();
});

test('authorize -> /login -> Continue with Corp SSO -> upstream -> consent -> client; then /account', async () => {
  const sub = 'browser-person';
  const email = uniqueEmail('browser');
  upstream.accounts.set(sub, { sub, email, email_verified: true, given_name: 'Ada', family_name: 'Lovelace' });
  upstream.signInAs(sub);
  const client = await makeClient(t, { name: 'Team Wiki', redirectUris: ['https://wiki.test/callback'] });
  const { params, verifier, state } = authorizeParams(client, { nonce: 'n-0S6_WzA2Mj' });
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    let callback: URL | undefined;
    await page.route('https://wiki.test/**', async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in' });
    });
    await page.goto(`${baseUrl}/api/oauth/authorize?${new URLSearchParams(params)}`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByRole('link', { name: 'Continue with Corp SSO' }).click();
    await page.getByRole('heading', { name: /Team Wiki wants to access your account/ }).waitFor();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(/^https:\/\/wiki\.test\/callback/);
    expect(callback?.searchParams.get('state')).toBe(state);
    const token = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({
        grant_type: 'authorization_code',
        code: callback!.searchParams.get('code'),
        redirect_uri: 'https://wiki.test/callback',
        code_verifier: verifier,
      });
    expect(token.status).toBe(200);
    const user = await t.db('users').where({ email }).first();
    expect(t.ctx.jwt.verifyAccess(token.body.access_token, t.clock.now())).toMatchObject({ userId: user.id, amr: ['fed'] });
    const idToken = JSON.parse(Buffer.from(token.body.id_token.split('.')[1], 'base64url').toString());
    expect(idToken).toMatchObject({ sub: user.id, amr: ['fed'], email, name: 'Ada Lovelace' });

    // The same browser is signed in: /account lists the identity; unlinking the only way to sign in is refused.
    await page.goto(`${baseUrl}/account`);
    const section = page.getByRole('region', { name: 'Linked sign-ins' });
    await section.getByText('Corp SSO').waitFor();
    await section.getByRole('button', { name: 'Unlink Corp SSO' }).click();
    await page.getByText('This is the last way to sign in to your account').first().waitFor();
    expect(await t.db('user_identities').where({ user_id: user.id })).toHaveLength(1);
  } finally {
    await context.close();
  }
});
