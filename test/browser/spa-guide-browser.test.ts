import type { Server } from 'node:http';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { freePort } from '../helpers/oauth';
import { closeAll, guideBlock, listenAll, resourceServer, serveSpa, signInThroughSpa } from '../helpers/spa-guide';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The single-page-app guide (docs/guide-spa.md) in a real browser: its three modules, as the guide prints them with
 * only the values of settings.js replaced, run in Chromium on http://localhost:<port>, against a server on another
 * localhost port where the application is registered with nothing but the console's application form (the SPA
 * preset, in Chromium; the API resource through the admin API; no ALLOWED_ORIGINS, no restart), and call the
 * example API (examples/apps/resource-server.mjs) on a third origin. Every cross-origin call (discovery, token,
 * refresh, the API, userinfo, revocation) works only if the CORS answers are right.
 */
const AUDIENCE = 'https://invoices.example.com/';
let t: TestApp;
let baseUrl: string;
let spaOrigin: string;
let apiUrl: string;
let browser: Browser;
const servers: Server[] = [];

beforeAll(async () => {
  const [serverPort, spaPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  baseUrl = `http://localhost:${serverPort}`;
  spaOrigin = `http://localhost:${spaPort}`;
  apiUrl = `http://localhost:${apiPort}`;
  // No global CORS list at all: the client's own origins must be enough.
  t = await createTestApp({ env: { BASE_URL: baseUrl, PORT: String(serverPort), ALLOWED_ORIGINS: '' } });
  await listenAll(servers, t.app, serverPort);
  await listenAll(
    servers,
    await resourceServer.createApi({ issuer: baseUrl, audience: AUDIENCE, insecure: true, corsOrigins: [spaOrigin] }),
    apiPort,
  );
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await closeAll(servers);
  await t?.close();
});

test('the SPA guide signs in from another localhost origin, calls its API, refreshes, reads userinfo and revokes in Chromium', async () => {
  const admin = (await makeSignedInUser(t, ['admin'])).bearer;
  const resource = await request(t.app)
    .post('/api/admin/api-resources')
    .set('Authorization', admin)
    .send({ identifier: AUDIENCE, name: 'Invoices', scopes: ['invoices:read'] });
  expect(resource.status).toBe(201);
  // The application is registered with nothing but the console's application form, in the browser: the
  // single-page-app preset, its name, the redirect URI and the API ticked (no origins typed, no restart).
  const owner = await makeUser(t, { roles: ['admin'] });
  const adminContext = await browser.newContext();
  let clientId: string;
  try {
    const login = await adminContext.request.post(`${baseUrl}/api/auth/login`, { data: { email: owner.email, password: owner.password } });
    expect(login.status()).toBe(200);
    const form = await adminContext.newPage();
    await form.goto(`${baseUrl}/admin/applications/new?preset=spa`);
    await form.locator('#f-name').fill('Invoices web');
    await form.locator('#f-redirect_uris').fill(`${spaOrigin}/callback`);
    await form.locator(`input[name="allowed_resources"][value="${AUDIENCE}"]`).check();
    await Promise.all([form.waitForNavigation(), form.locator('form[action="/admin/applications"] button[type="submit"]').last().click()]);
    const row = (await t.db('oauth_clients').where({ name: 'Invoices web' }).first()) as { client_id: string; type: string } | undefined;
    expect([row?.type, await form.locator('#error-summary').count()]).toEqual(['public', 0]);
    clientId = row!.client_id;
    // The quick-start after creation names the client_id the guide's settings.js needs.
    expect(await form.content()).toContain(clientId);
    const created = await request(t.app).get(`/api/admin/oauth-clients/${clientId}`).set('Authorization', admin);
    expect(created.body.client.allowed_origins).toEqual([spaOrigin]);
  } finally {
    await adminContext.close();
  }

  // settings.js with the registration's values, exactly as a reader fills it in; the other two modules untouched.
  const settings = guideBlock('// settings.js')
    .replace("'https://sso.example.com'", `'${baseUrl}'`)
    .replace("'https://invoices.example.com/invoices'", `'${apiUrl}/invoices'`)
    .replace("'client_…'", `'${clientId}'`)
    .replace("'https://app.example.com/callback'", `'${spaOrigin}/callback'`);
  expect(settings).toContain(`insecure: /^http`);
  await listenAll(servers, serveSpa(spaOrigin, settings), Number(new URL(spaOrigin).port));

  const user = await makeUser(t, { firstName: 'Ada', lastName: 'Browser' });
  const { result, page, problems, close } = await signInThroughSpa(browser, { baseUrl, spaOrigin, user });
  let revoked: string | undefined;
  try {
    expect(result.claims).toMatchObject({ sub: user.id, iss: baseUrl, aud: clientId });
    expect(result.invoices).toMatchObject({ caller: user.id, client_id: clientId });
    expect(result.fresh.access_token).toBeTruthy();
    expect(result.fresh.refresh_token).not.toBe(result.tokens.refresh_token);

    // From the app's origin too: a refresh without `resource` (the server's own token), userinfo with it (a preflight:
    // Authorization is not a simple header), userinfo with the API's token (its 401 readable by the app), revocation.
    const calls = await page.evaluate(
      async ({ base, client, refreshToken, apiToken }) => {
        const form = (fields: Record<string, string>) => ({
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(fields),
        });
        const own = (await (
          await fetch(`${base}/api/oauth/token`, form({ grant_type: 'refresh_token', client_id: client, refresh_token: refreshToken }))
        ).json()) as { access_token: string; refresh_token: string };
        const info = await fetch(`${base}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${own.access_token}` } });
        const wrong = await fetch(`${base}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${apiToken}` } });
        const revoke = await fetch(
          `${base}/api/oauth/revoke`,
          form({ client_id: client, token: own.refresh_token, token_type_hint: 'refresh_token' }),
        );
        return {
          info: info.status,
          name: ((await info.json()) as { name?: string }).name,
          wrong: wrong.status,
          challenge: wrong.headers.get('www-authenticate')?.startsWith('Bearer') ?? false,
          revoke: revoke.status,
          revoked: own.refresh_token,
        };
      },
      { base: baseUrl, client: clientId, refreshToken: result.fresh.refresh_token, apiToken: result.fresh.access_token },
    );
    expect(calls).toMatchObject({ info: 200, name: 'Ada Browser', wrong: 401, challenge: true, revoke: 200 });
    revoked = calls.revoked;
    expect(problems).toEqual([]);
  } finally {
    await close();
  }
  // The revoked refresh token is dead.
  const again = await request(t.app)
    .post('/api/oauth/token')
    .type('form')
    .send({ grant_type: 'refresh_token', client_id: clientId, refresh_token: revoked ?? '' });
  expect(again.status).toBe(400);
  expect(again.body.error).toBe('invalid_grant');
}, 90_000);
