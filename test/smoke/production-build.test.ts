import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../helpers/oauth';
import { buildOnce, startServerProcess, type RunningServer } from '../helpers/processes';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp';
import { createTestDatabase } from '../helpers/test-app';

/**
 * The production build as production runs it (issue 10): `npm run build` bundles the server into one file,
 * dist/src/server.bundle.js (run by the entry dist/src/server.js), and leaves some packages outside the bundle, loaded
 * from node_modules on first use (the WebAuthn server stack, jose, nodemailer, qrcode, otpauth, swagger-ui-dist, the
 * WebAuthn browser script). The rest of the suite runs the TypeScript sources; this test starts the bundle and makes a
 * request that loads each of them.
 */
let server: RunningServer | undefined;
let smtp: TestSmtpServer;
let dropDb: (() => Promise<void>) | undefined;

beforeAll(async () => {
  await buildOnce();
  smtp = await startSmtpServer();
  const db = await createTestDatabase();
  dropDb = db.drop;
  const port = await freePort();
  server = await startServerProcess(
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      DATABASE_URL: db.url,
      BASE_URL: `http://localhost:${port}`,
      JWT_ACCESS_SECRET: randomBytes(32).toString('hex'),
      JWT_REFRESH_SECRET: randomBytes(32).toString('hex'),
      SMTP_URL: smtp.url,
      MAIL_FROM: 'sso@example.test',
      LOG_LEVEL: 'warn',
    },
    port,
    150_000,
    { build: true },
  );
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await smtp?.close();
  await dropDb?.();
});

const get = (path: string, init: RequestInit = {}) => fetch(`${server!.base}${path}`, { redirect: 'manual', ...init });
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  get(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

test('the bundle is pure ASCII, so V8 holds its source at one byte per character (not two)', () => {
  const bundle = fs.readFileSync(path.resolve(__dirname, '../../dist/src/server.bundle.js')).toString('latin1');
  expect(bundle.length).toBeGreaterThan(1_000_000);
  expect(bundle.match(/[^\x00-\x7f]/g) ?? []).toEqual([]);
});

test("the bundle holds zod's English messages and none of its other locales (issue 33: heap and source at start)", () => {
  const bundle = fs.readFileSync(path.resolve(__dirname, '../../dist/src/server.bundle.js'), 'latin1');
  expect(bundle).toContain('Invalid input: expected');
  // Dutch, one of the 63 others, whose messages are plain ASCII.
  expect(bundle).not.toContain('Ongeldige invoer');
});

test('the bundle serves health, discovery and the lazily loaded assets', async () => {
  expect((await get('/health')).status).toBe(200);
  const discovery = await get('/.well-known/openid-configuration');
  expect(discovery.status).toBe(200);
  expect(await discovery.json()).toMatchObject({ id_token_signing_alg_values_supported: ['RS256', 'ES256'] });
  // The signing key was generated at first start (jose, loaded for that) and is opened by Node's own JWK import.
  const jwks = (await (await get('/api/oauth/jwks')).json()) as { keys: Array<{ kty: string; kid: string }> };
  expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'RSA', kid: expect.any(String) })]);
  const docs = await get('/api/docs/');
  expect(docs.status).toBe(200);
  expect(await docs.text()).toContain('swagger');
  const browserScript = await get('/static/simplewebauthn-browser.js');
  expect(browserScript.status).toBe(200);
  expect((await browserScript.text()).length).toBeGreaterThan(1000);
});

test('the bundle registers (mail through nodemailer), enrols TOTP (otpauth, qrcode) and starts a passkey (WebAuthn)', async () => {
  const email = `bundle-${randomBytes(4).toString('hex')}@example.test`;
  const registered = await post('/api/auth/register', { email, password: 'Bundle-Passw0rd!', first_name: 'Bun', last_name: 'Dle' });
  expect(registered.status).toBe(201);
  const { accessToken } = (await registered.json()) as { accessToken: string };
  const bearer = { authorization: `Bearer ${accessToken}` };
  expect(await smtp.waitForMails(email, 1, 10_000)).toHaveLength(1);

  const totp = await post('/api/auth/mfa/totp/setup', {}, bearer);
  expect(totp.status).toBe(200);
  expect(await totp.json()).toMatchObject({ otpauth_url: expect.stringMatching(/^otpauth:\/\/totp\//) });

  const options = await post('/api/auth/passkeys/register/options', {}, bearer);
  expect(options.status).toBe(200);
  expect(await options.json()).toMatchObject({ challenge: expect.any(String), rp: { id: 'localhost' } });

  // /account shows the pending authenticator app as a QR code (an SVG drawn by qrcode).
  const cookies = registered.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const account = await get('/account', { headers: { cookie: cookies } });
  expect(account.status).toBe(200);
  expect(await account.text()).toContain('<svg');
});
