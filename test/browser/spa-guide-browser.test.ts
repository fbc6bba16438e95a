import fs from 'node:fs';
import type { RequestListener, Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/ensure-chromium';
import { freePort } from '../helpers/oauth';
import { buildOnce, ROOT, startServerProcess, type RunningServer } from '../helpers/processes';
import { closeAll, guideBlock, holdLocalPort, serveSpa, signInThroughSpa } from '../helpers/spa-guide';
import { createTestDatabase } from '../helpers/test-app';

/**
 * The single-page-app guide (docs/guide-spa.md) as a newcomer runs it, end to end with real processes:
 * - the built server (`npm start`'s dist/src/server.js) on a fresh database, BASE_URL http://localhost:<port>, no
 *   ALLOWED_ORIGINS, no setting of any kind; its first administrator created through the setup link it logs;
 * - the API registered with the admin API (the guide's curl), the application with nothing but the console's
 *   application form (the single-page-app preset, in Chromium): no origins typed, no restart;
 * - the example API, examples/apps/resource-server.mjs, run as the guide says (`CORS_ORIGINS` = the app's origin);
 * - the guide's three modules, unchanged but for the values of settings.js, in Chromium on a third localhost origin.
 * Every cross-origin call (discovery, token, refresh, the API, userinfo, revocation) works only if the CORS answers
 * are right.
 */
const AUDIENCE = 'https://invoices.example.com/';
let server: RunningServer | undefined;
let api: ChildProcess | undefined;
let apiOutput = '';
let dropDb: (() => Promise<void>) | undefined;
let baseUrl: string;
let spaOrigin: string;
let apiUrl: string;
let browser: Browser;
const servers: Server[] = [];
/** Gives the SPA origin's server (its port held in beforeAll) its handler. */
let serveSpaLater: (handler: RequestListener) => void;

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

beforeAll(async () => {
  await buildOnce();
  const db = await createTestDatabase();
  dropDb = db.drop;
  // The server and the example API are child processes (free ports); the SPA's own server holds its port from the start.
  const [serverPort, apiPort] = [await freePort(), await freePort()];
  const spa = await holdLocalPort(servers);
  const spaPort = spa.port;
  serveSpaLater = spa.serve;
  baseUrl = `http://localhost:${serverPort}`;
  spaOrigin = `http://localhost:${spaPort}`;
  apiUrl = `http://localhost:${apiPort}`;
  // What a newcomer sets: the database and BASE_URL (no NODE_ENV, no ALLOWED_ORIGINS, no secrets: development).
  server = await startServerProcess(
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: db.url,
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'sso-spa-guide-')),
      BASE_URL: baseUrl,
      LOG_LEVEL: 'info',
    },
    serverPort,
    150_000,
    { build: true },
  );
  // The example API as its header says to run it.
  api = spawn(process.execPath, [path.join(ROOT, 'examples/apps/resource-server.mjs')], {
    cwd: path.join(ROOT, 'examples/apps'),
    env: { PATH: process.env.PATH, ISSUER: baseUrl, AUDIENCE, PORT: String(apiPort), CORS_ORIGINS: spaOrigin },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  api.stdout!.on('data', (d) => (apiOutput += d));
  api.stderr!.on('data', (d) => (apiOutput += d));
  for (let waited = 0; !apiOutput.includes('API on http://localhost'); waited++) {
    if (api.exitCode !== null || waited > 300) throw new Error(`the example API did not start: ${apiOutput}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await launchChromium();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await closeAll(servers);
  if (api && api.exitCode === null) {
    api.kill('SIGTERM');
    await new Promise((r) => api!.once('exit', r));
  }
  await server?.stop();
  await dropDb?.();
});

test('the SPA guide, against the built server set up only through its setup link, console form and admin API, signs in from another localhost origin, calls the example API, refreshes, reads userinfo and revokes in Chromium', async () => {
  // The first administrator, through the setup link the server logged.
  const linkIn = () => /(http:\/\/localhost:\d+\/setup\?token=[A-Za-z0-9_-]{43})/.exec(server!.output())?.[1];
  for (let waited = 0; !linkIn() && waited < 100; waited++) await new Promise((r) => setTimeout(r, 100));
  expect(linkIn()).toBeDefined();
  const owner = { email: 'owner@example.test', password: 'owner-password-1' };
  const adminContext = await browser.newContext();
  let clientId: string;
  try {
    const setup = await adminContext.newPage();
    await setup.goto(linkIn()!);
    await setup.getByLabel('Email').fill(owner.email);
    await setup.getByLabel('First name').fill('Olga');
    await setup.getByLabel('Last name').fill('Owner');
    await setup.getByLabel('Password', { exact: true }).fill(owner.password);
    await setup.getByLabel('Repeat the password').fill(owner.password);
    await setup.getByRole('button', { name: 'Create administrator' }).click();
    await setup.getByRole('heading', { name: 'Administrator created' }).waitFor();

    // The API, with the guide's curl (an administrator's access token as the README gets it).
    const login = await fetch(`${baseUrl}/api/auth/login`, json(owner));
    expect(login.status).toBe(200);
    const bearer = `Bearer ${((await login.json()) as { accessToken: string }).accessToken}`;
    const resource = await fetch(
      `${baseUrl}/api/admin/api-resources`,
      json({ identifier: AUDIENCE, name: 'Invoices', scopes: ['invoices:read'] }, { authorization: bearer }),
    );
    expect(resource.status).toBe(201);

    // The application with nothing but the console's form: the single-page-app preset, its name, the redirect URI
    // and the API ticked (no origins typed, no restart).
    const form = await adminContext.newPage();
    await form.goto(`${baseUrl}/login`);
    await form.getByLabel('Email address').fill(owner.email);
    await form.getByLabel('Password').fill(owner.password);
    await Promise.all([form.waitForNavigation(), form.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    await form.goto(`${baseUrl}/admin/applications/new?preset=spa`);
    await form.locator('#f-name').fill('Invoices web');
    await form.locator('#f-redirect_uris').fill(`${spaOrigin}/callback`);
    await form.locator(`input[name="allowed_resources"][value="${AUDIENCE}"]`).check();
    await Promise.all([form.waitForNavigation(), form.locator('form[action="/admin/applications"] button[type="submit"]').last().click()]);
    expect(await form.locator('#error-summary').count()).toBe(0);
    const listed = await fetch(`${baseUrl}/api/admin/oauth-clients`, { headers: { authorization: bearer } });
    const clients = (
      (await listed.json()) as { clients: Array<{ client_id: string; name: string; type: string; allowed_origins: string[] }> }
    ).clients;
    const created = clients.find((c) => c.name === 'Invoices web');
    expect(created).toMatchObject({ type: 'public', allowed_origins: [spaOrigin] });
    clientId = created!.client_id;
    // The quick start after creation names the client_id the guide's settings.js needs.
    expect(await form.content()).toContain(clientId);
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
  serveSpaLater(serveSpa(spaOrigin, settings));

  // Someone signs up (registration is open by default) and signs in through the app.
  const user = { email: 'ada@example.test', password: 'ada-password-1' };
  const registered = await fetch(`${baseUrl}/api/auth/register`, json({ ...user, first_name: 'Ada', last_name: 'Browser' }));
  expect(registered.status).toBe(201);
  const userId = ((await registered.json()) as { user: { id: string } }).user.id;
  const { result, page, problems, close } = await signInThroughSpa(browser, { baseUrl, spaOrigin, user });
  let revoked: string | undefined;
  try {
    expect(result.claims).toMatchObject({ sub: userId, iss: baseUrl, aud: clientId });
    expect(result.invoices).toMatchObject({ caller: userId, client_id: clientId });
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
  const again = await fetch(`${baseUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, refresh_token: revoked ?? '' }),
  });
  expect(again.status).toBe(400);
  expect(((await again.json()) as { error: string }).error).toBe('invalid_grant');
}, 120_000);
