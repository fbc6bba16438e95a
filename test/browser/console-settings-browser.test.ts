import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { bearerAt, checkConsolePage, newConsoleContext, signInAt } from '../helpers/console-browser';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * The console's Settings form in Chromium (docs/settings.md): an admin changes a setting and sees it in force, a bad
 * value comes back with the error summary focused and the message beside the field, the German page; axe-core WCAG
 * 2.1 AA in both colour schemes at 1280 and 320 px. CONSOLE_SHOTS=<dir> writes a screenshot of each page.
 */
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

test('an admin changes the product name live, is shown a refused colour where it belongs, in English and German', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'] });
  const bearer = await bearerAt(baseUrl, admin.email, admin.password);
  const context = await newConsoleContext(browser);
  const page = await context.newPage();
  const check = (name: string) => checkConsolePage(page, name, SHOTS);
  try {
    await signInAt(page, baseUrl, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    expect(await page.getByLabel('Allowed origins (global CORS)').isDisabled()).toBe(true);
    await check('settings');

    await page.getByLabel('Product name').fill('Acme ID');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const settings = (await (await fetch(`${baseUrl}/api/admin/settings`, { headers: { authorization: bearer } })).json()) as {
      settings: Array<{ name: string; value: unknown }>;
    };
    expect(settings.settings.find((s) => s.name === 'brand_name')?.value).toBe('Acme ID');
    // In force at once: the sign-in page's title carries the new name.
    const login = await (await fetch(`${baseUrl}/login`)).text();
    expect(login).toContain('Acme ID');

    await page.getByLabel('Brand colour').fill('pink');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('#error-summary').waitFor();
    expect(await page.title()).toMatch(/^Error/);
    expect(await page.evaluate(() => document.activeElement?.closest('#error-summary') !== null)).toBe(true);
    expect(await page.locator('#f-brand_color-error').textContent()).toBeTruthy();
    expect(await page.getByLabel('Brand colour').inputValue()).toBe('pink');
    await check('settings-error');

    await page.locator('#error-summary a[href="#f-brand_color"]').click();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-brand_color');

    await context.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
    await page.goto(`${baseUrl}/admin/settings`);
    await page.getByRole('heading', { name: 'Einstellungen', level: 1 }).waitFor();
    await page.getByText('Durch die Umgebungsvariable ALLOWED_ORIGINS festgelegt').waitFor();
    await check('settings-de');
  } finally {
    await context.close();
  }
}, 180_000);
