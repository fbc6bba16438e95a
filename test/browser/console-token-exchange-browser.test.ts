import fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { bearerAt, checkConsolePage } from '../helpers/console-browser';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeApiResource } from '../helpers/apps';
import { makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * Token exchange in the console's application form (docs/token-exchange.md), in Chromium, in English and German: an
 * administrator gives a confidential application the grant with its checkbox, the REST API shows it in grant_types,
 * and a public application with it is refused with the rule's message. axe-core at 1280 and 320 px in both colour
 * schemes; CONSOLE_SHOTS=<dir> writes the screenshots.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;
const SHOTS = process.env.CONSOLE_SHOTS;

beforeAll(async () => {
  ({ t, baseUrl, stop: stopApp } = await createListeningTestApp());
  browser = await launchChromium();
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopApp?.();
});

const LABELS = {
  en: {
    checkbox: /^Token exchange \(RFC 8693/,
    create: 'Create application',
    created: /^Application Orders API en created/,
    name: 'Name',
    refused: 'token exchange is for confidential clients only',
  },
  de: {
    checkbox: /^Token Exchange \(RFC 8693/,
    create: 'Anwendung erstellen',
    created: /^Anwendung Orders API de erstellt/,
    name: 'Name',
    refused: 'Token-Austausch ist nur für vertrauliche Anwendungen möglich',
  },
} as const;

async function signIn(page: Page, email: string, password: string) {
  await page.goto(`${baseUrl}/login`);
  await page.locator('input[name=email]').fill(email);
  await page.locator('input[name=password]').fill(password);
  await page.locator('form button[type=submit]').first().click();
  await page.waitForURL((url) => !url.pathname.startsWith('/login'));
}

test.each(['en', 'de'] as const)(
  '%s: a confidential application gets token exchange from the form; a public one is refused',
  async (lang) => {
    const labels = LABELS[lang];
    const api = await makeApiResource(t, { name: `Inventory ${lang}`, scopes: ['orders:read'] });
    const admin = await makeUser(t, { roles: ['super_admin'] });
    const bearer = await bearerAt(baseUrl, admin.email, admin.password);
    const context = await browser.newContext({
      bypassCSP: true,
      viewport: { width: 1280, height: 900 },
      locale: lang === 'de' ? 'de-DE' : 'en-US',
    });
    const page = await context.newPage();
    try {
      await signIn(page, admin.email, admin.password);
      await page.goto(`${baseUrl}/admin/applications/new?preset=custom`);
      expect(await page.getAttribute('html', 'lang')).toBe(lang);
      await page.getByLabel(labels.name, { exact: true }).fill(`Orders API ${lang}`);
      await page.locator('input[type=radio][name=type][value=confidential]').check();
      await page.locator('textarea[name=redirect_uris], input[name=redirect_uris]').first().fill('https://orders.example.test/callback');
      await page.getByLabel(labels.checkbox).check();
      await page.getByLabel(new RegExp(`^Inventory ${lang} — `)).check();
      await checkConsolePage(page, `token-exchange-application-new-${lang}`, SHOTS);
      await page.getByRole('button', { name: labels.create }).click();
      await page.getByRole('heading', { name: labels.created }).waitFor();
      const clientId = (await page.locator('#client-id').textContent())!;
      const client = (await (
        await fetch(`${baseUrl}/api/admin/oauth-clients/${clientId}`, { headers: { authorization: bearer } })
      ).json()) as {
        client: { grant_types: string[]; allowed_resources: string[] };
      };
      expect(client.client.grant_types).toContain(GRANT);
      expect(client.client.allowed_resources).toEqual([api.identifier]);
      await page.goto(`${baseUrl}/admin/applications/${clientId}`);
      expect(await page.content()).toContain('token-exchange');
      await checkConsolePage(page, `token-exchange-application-detail-${lang}`, SHOTS);

      // The rule is the API's: a public application with the grant is refused, the message beside the form.
      await page.goto(`${baseUrl}/admin/applications/new?preset=custom`);
      await page.getByLabel(labels.name, { exact: true }).fill(`Public ${lang}`);
      await page.locator('input[type=radio][name=type][value=public]').check();
      await page.locator('textarea[name=redirect_uris], input[name=redirect_uris]').first().fill('https://spa.example.test/callback');
      await page.getByLabel(labels.checkbox).check();
      await page.getByRole('button', { name: labels.create }).click();
      // In the page's language (the refusal carries its catalogue key).
      await page.getByText(labels.refused).first().waitFor();
      await checkConsolePage(page, `token-exchange-application-refused-${lang}`, SHOTS);
    } finally {
      await context.close();
    }
  },
);
