import fs from 'node:fs';
import type { RequestListener, Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { checkConsolePage, newConsoleContext, signInAt } from '../helpers/console-browser';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser } from '../helpers/factories';
import { closeAll, holdLocalPort, resourceServer, serveSpa, signInThroughSpa } from '../helpers/spa-guide';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Creating applications from what they are, in Chromium (docs/apps.md, docs/console.md): the Overview's checklist of a
 * fresh server, the choice of a preset, each preset's form and its quick-start, the quick-start again from the
 * application's page, in English and German; axe-core WCAG 2.1 AA in both colour schemes at 1280 and 320 px. Then the
 * single-page-app guide's code runs against the SPA created with nothing but these console forms: its settings.js is
 * the quick-start's code as shown, only the example API's address put in. CONSOLE_SHOTS=<dir> writes screenshots.
 */
const AUDIENCE = 'https://invoices.example.com/';
const SHOTS = process.env.CONSOLE_SHOTS;
let t: TestApp;
let baseUrl: string;
let spaOrigin: string;
let apiUrl: string;
let browser: Browser;
const servers: Server[] = [];
/** Gives the SPA origin's server (its port held in beforeAll) its handler. */
let serveSpaLater: (handler: RequestListener) => void;

beforeAll(async () => {
  // Each server holds its port from the start and answers once its handler is made.
  const [server, spa, api] = [await holdLocalPort(servers), await holdLocalPort(servers), await holdLocalPort(servers)];
  serveSpaLater = spa.serve;
  baseUrl = `http://localhost:${server.port}`;
  spaOrigin = `http://localhost:${spa.port}`;
  apiUrl = `http://localhost:${api.port}`;
  // No global CORS list: what the console form registers must be enough.
  t = await createTestApp({ env: { BASE_URL: baseUrl, PORT: String(server.port), ALLOWED_ORIGINS: '' } });
  server.serve(t.app);
  api.serve(await resourceServer.createApi({ issuer: baseUrl, audience: AUDIENCE, insecure: true, corsOrigins: [spaOrigin] }));
  browser = await launchChromium();
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await closeAll(servers);
  await t?.close();
});

const PRESETS = [
  { key: 'web', link: 'Web app with a server', redirect: 'https://reports.example.com/callback', secret: true },
  { key: 'spa', link: 'Single-page app', redirect: '', secret: false },
  { key: 'native', link: 'Native or command-line app', redirect: 'http://127.0.0.1/callback', secret: false },
  { key: 'm2m', link: 'Machine to machine', redirect: undefined, secret: true },
  { key: 'device', link: 'Device', redirect: undefined, secret: false },
] as const;

async function quickStartCode(page: Page): Promise<string> {
  return (await page.locator('#quick-start-code').textContent()) ?? '';
}

test('an admin creates each kind of application from the console and sees its quick-start; the SPA runs the guide', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'] });
  const context = await newConsoleContext(browser);
  const page = await context.newPage();
  const check = (name: string) => checkConsolePage(page, name, SHOTS);
  let spaClientId = '';
  let spaSettings = '';
  try {
    await signInAt(page, baseUrl, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('heading', { name: 'Get started' }).waitFor();
    await check('overview-get-started');
    await context.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
    await page.reload();
    await page.getByRole('heading', { name: 'Erste Schritte' }).waitFor();
    await check('overview-get-started-de');
    // The chart's legend keeps each German label whole at 320 px (no "Anmeldun-gen").
    await page.setViewportSize({ width: 320, height: 900 });
    const legendLines = await page.locator('.legend li').evaluateAll((items) =>
      items.map((li) => {
        const range = document.createRange();
        range.selectNodeContents(Array.from(li.childNodes).find((n) => n.nodeType === Node.TEXT_NODE && n.textContent?.trim())!);
        return new Set(
          Array.from(range.getClientRects())
            .filter((r) => r.width > 0)
            .map((r) => Math.round(r.top)),
        ).size;
      }),
    );
    expect(legendLines).toEqual([1, 1]);
    await page.setViewportSize({ width: 1280, height: 900 });
    await context.setExtraHTTPHeaders({ 'Accept-Language': 'en' });

    // The API the SPA calls, registered with the console's form too.
    await page.goto(`${baseUrl}/admin/api-resources/new`);
    await page.getByLabel('Identifier').fill(AUDIENCE);
    await page.getByLabel('Name').fill('Invoices');
    await page.getByLabel('Scopes').fill('invoices:read');
    await page.getByRole('button', { name: 'Register API' }).click();
    await page.getByRole('status').filter({ hasText: 'API resource Invoices registered.' }).waitFor();

    for (const preset of PRESETS) {
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Applications' }).click();
      await page.getByRole('link', { name: 'Create an application' }).click();
      await page.getByRole('heading', { name: 'Create an application', level: 1 }).waitFor();
      if (preset.key === 'web') await check('application-chooser');
      await page.getByRole('link', { name: preset.link, exact: true }).click();
      await page.getByRole('heading', { name: `Create an application: ${preset.link}` }).waitFor();
      await page.getByLabel('Name').fill(`Invoices ${preset.key}`);
      const redirects = page.getByLabel('Redirect URIs', { exact: true });
      expect(await redirects.count()).toBe(preset.redirect === undefined ? 0 : 1);
      if (preset.redirect !== undefined) await redirects.fill(preset.redirect || `${spaOrigin}/callback`);
      if (preset.key === 'spa') {
        await page.getByLabel(/^Invoices — /).check();
        await check('application-new-spa');
      }
      await page.getByRole('button', { name: 'Create application' }).click();
      await page.getByRole('heading', { name: `Application Invoices ${preset.key} created` }).waitFor();
      await page.getByRole('heading', { name: 'Quick start' }).waitFor();
      const clientId = (await page.locator('#client-id').textContent()) ?? '';
      const code = await quickStartCode(page);
      expect(code).toContain(`'${clientId}'`);
      expect(code).toContain(`'${baseUrl}'`);
      expect(await page.locator('#client-secret').count()).toBe(preset.secret ? 1 : 0);
      if (preset.key === 'web' || preset.key === 'spa' || preset.key === 'm2m') await check(`quick-start-${preset.key}`);
      if (preset.key === 'spa') {
        spaClientId = clientId;
        spaSettings = code;
      }
    }

    // Later, from the application's page: the same quick-start, without the secret.
    await page.goto(`${baseUrl}/admin/applications/${spaClientId}`);
    await page.getByRole('link', { name: 'Quick start' }).click();
    await page.getByRole('heading', { name: 'Quick start: Invoices spa', level: 1 }).waitFor();
    expect(await quickStartCode(page)).toBe(spaSettings);
    await check('quick-start-page');

    // German.
    await context.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
    await page.goto(`${baseUrl}/admin/applications/new`);
    await page.getByRole('heading', { name: 'Anwendung anlegen', level: 1 }).waitFor();
    await check('application-chooser-de');
    await page.goto(`${baseUrl}/admin/applications/new?preset=spa`);
    await page.getByRole('heading', { name: 'Anwendung anlegen: Single-Page-Anwendung' }).waitFor();
    await check('application-new-spa-de');
    await page.goto(`${baseUrl}/admin/applications/${spaClientId}/quick-start`);
    await page.getByRole('heading', { name: 'Schnellstart: Invoices spa', level: 1 }).waitFor();
    await check('quick-start-page-de');
    await page.goto(`${baseUrl}/admin`);
    await page.getByRole('heading', { name: 'Übersicht' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Erste Schritte' }).count()).toBe(0);
  } finally {
    await context.close();
  }

  // The SPA guide's code, its settings.js the quick-start as shown; only the example API's address is the reader's.
  const settings = spaSettings.replace("'https://invoices.example.com/invoices'", `'${apiUrl}/invoices'`);
  expect(settings).not.toBe(spaSettings);
  expect(settings).toContain(`resource: '${AUDIENCE}'`);
  serveSpaLater(serveSpa(spaOrigin, settings));
  const user = await makeUser(t, { firstName: 'Ada', lastName: 'Console' });
  const { result, problems, close } = await signInThroughSpa(browser, { baseUrl, spaOrigin, user });
  try {
    expect(result.claims).toMatchObject({ sub: user.id, iss: baseUrl, aud: spaClientId });
    expect(result.invoices).toMatchObject({ caller: user.id, client_id: spaClientId });
    expect(result.fresh.refresh_token).not.toBe(result.tokens.refresh_token);
    expect(problems).toEqual([]);
  } finally {
    await close();
  }
}, 240_000);
