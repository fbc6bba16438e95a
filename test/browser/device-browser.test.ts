import path from 'node:path';
import type { Browser } from 'playwright-core';
import { checkAccessible } from '../helpers/accessibility';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser } from '../helpers/factories';
import { makeApiResource, makeAppClient } from '../helpers/apps';
import { createListeningTestApp } from '../helpers/oauth';
import { loadEsm, type OpenIdClient } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';

/**
 * The device authorization grant end to end (RFC 8628, CONTRACT §12): examples/apps/device.mjs (openid-client's device
 * grant, polling at the server's interval) on one side, a person in a real Chromium on /device on the other: sign-in
 * on the hosted page, the code typed in lower case without the dash, the app's name and scopes, Approve. The device
 * then holds an id_token for that person and an RFC 9068 token for the API it asked for; a denied request ends the
 * library's polling with access_denied.
 */
type Tokens = Awaited<ReturnType<OpenIdClient['pollDeviceAuthorizationGrant']>>;
type Started = { user_code: string; verification_uri: string; verification_uri_complete: string };
const device = loadEsm<{
  deviceLogin(options: {
    issuer: string;
    clientId: string;
    scope: string;
    resource?: string;
    insecure: boolean;
    showCode: (s: Started) => Promise<void> | void;
  }): Promise<Tokens>;
}>(path.join(__dirname, '../../examples/apps/device.mjs'));
const jose = require('jose') as typeof import('jose');
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await stop?.();
});

/** The person: opens the address the device shows, signs in, types the code, answers. */
async function personAnswers(started: Started, user: { email: string; password: string }, decision: 'Approve' | 'Deny') {
  // bypassCSP: axe-core is injected into the confirmation page.
  const context = await browser.newContext({ bypassCSP: true });
  const page = await context.newPage();
  try {
    await page.goto(started.verification_uri);
    await page.waitForURL(/\/login\?/);
    await page.fill('#email', user.email);
    await page.fill('#password', user.password);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/device$/);
    await page.fill('#user_code', started.user_code.toLowerCase().replace('-', ''));
    await page.click('text=Continue');
    await page.waitForSelector('#client-name');
    const shown = {
      client: await page.textContent('#client-name'),
      scopes: await page.textContent('ul.scopes'),
      code: await page.textContent('#user-code'),
    };
    // The confirmation page with its large code, in English (German: test/browser/i18n-browser.test.ts).
    if (decision === 'Approve') await checkAccessible(page, 'device-confirm-en', process.env.CONSOLE_SHOTS);
    await page.click(`text=${decision}`);
    const result = await page.textContent('#device-result');
    return { shown, result };
  } finally {
    await context.close();
  }
}

test('openid-client device grant + Chromium on /device: approved -> id_token and an RFC 9068 token for the API', async () => {
  const user = await makeUser(t, { firstName: 'Tess', lastName: 'Vee' });
  const resource = await makeApiResource(t, { scopes: ['shows:read'] });
  const client = await makeAppClient(t, {
    type: 'public',
    grantTypes: [DEVICE_GRANT, 'refresh_token'],
    redirectUris: [],
    name: 'Living-room TV',
    allowedResources: [resource.identifier],
  });
  let person: Promise<Awaited<ReturnType<typeof personAnswers>>> | undefined;
  const tokens = await device.deviceLogin({
    issuer: baseUrl,
    clientId: client.clientId,
    scope: 'openid profile shows:read',
    resource: resource.identifier,
    insecure: true,
    showCode: (started) => {
      expect(started.verification_uri).toBe(`${baseUrl}/device`);
      person = personAnswers(started, user, 'Approve');
    },
  });
  const { shown, result } = await person!;
  expect(shown.client).toBe('Living-room TV');
  expect(shown.scopes).toContain('See your name');
  expect(shown.scopes).toContain('shows:read');
  expect(result).toContain('Living-room TV is now signed in');
  expect(tokens.claims()).toMatchObject({ sub: user.id, aud: client.clientId, iss: baseUrl });
  expect(tokens.scope).toBe('openid profile shows:read');
  expect(typeof tokens.refresh_token).toBe('string');
  const jwks = jose.createRemoteJWKSet(new URL(`${baseUrl}/api/oauth/jwks`));
  const { payload } = await jose.jwtVerify(tokens.access_token, jwks, { issuer: baseUrl, audience: resource.identifier, typ: 'at+jwt' });
  expect(payload).toMatchObject({ sub: user.id, client_id: client.clientId, scope: 'openid profile shows:read' });
}, 60_000);

test('denied on /device: the library stops polling with access_denied', async () => {
  const user = await makeUser(t);
  const client = await makeAppClient(t, { type: 'public', grantTypes: [DEVICE_GRANT], redirectUris: [], name: 'Kiosk' });
  let person: Promise<unknown> | undefined;
  const outcome = await device
    .deviceLogin({
      issuer: baseUrl,
      clientId: client.clientId,
      scope: 'openid',
      insecure: true,
      showCode: (started) => {
        person = personAnswers(started, user, 'Deny');
      },
    })
    .catch((err: { error?: string }) => err);
  await person;
  expect((outcome as { error?: string }).error).toBe('access_denied');
}, 60_000);
