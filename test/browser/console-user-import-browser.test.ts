import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { checkConsolePage, newConsoleContext, signInAt } from '../helpers/console-browser';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * The console's import page in Chromium (docs/passwords.md): an admin pastes CSV, runs the dry run (the default), a
 * refused row shows the error summary and the per-row report, then imports for real; axe-core WCAG 2.1 AA on every
 * page in both colour schemes at 1280 and 320 px, in English and German. CONSOLE_SHOTS=<dir> writes screenshots.
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

test('an admin checks a CSV by a dry run, sees a refused row, then imports it', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'] });
  const context = await newConsoleContext(browser);
  const page = await context.newPage();
  const check = (name: string) => checkConsolePage(page, name, SHOTS);
  try {
    await signInAt(page, baseUrl, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.goto(`${baseUrl}/admin/users`);
    await page.getByRole('link', { name: 'Import or export accounts' }).click();
    await page.getByRole('heading', { name: 'Import accounts' }).waitFor();
    await check('import-form');

    await page.getByLabel('Format').selectOption('csv');
    await page.getByLabel('Accounts').fill(`email,first_name,last_name\nbrowser-imp@example.com,Ida,Import\n${admin.email},Dup,Row\n`);
    await page.getByRole('button', { name: 'Import' }).click();
    await page.locator('#error-summary').waitFor();
    await page.getByRole('cell', { name: 'an account with this address already exists' }).waitFor();
    await check('import-refused');

    await page.getByLabel('Accounts').fill('email,first_name,last_name\nbrowser-imp@example.com,Ida,Import\n');
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('status').filter({ hasText: 'All 1 row(s) passed the checks' }).waitFor();
    expect(await t.db('users').where({ email: 'browser-imp@example.com' }).first()).toBeUndefined();
    await check('import-dry-run');
    expect(await page.getByLabel('Dry run').isChecked()).toBe(false);
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('status').filter({ hasText: '1 account(s) imported.' }).waitFor();
    expect(await t.db('users').where({ email: 'browser-imp@example.com' }).first()).toBeDefined();

    const german = await context.newPage();
    await german.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
    await german.goto(`${baseUrl}/admin/users/import`);
    await german.getByRole('heading', { name: 'Konten importieren' }).waitFor();
    await checkConsolePage(german, 'import-form-de', SHOTS);
    await german.close();
  } finally {
    await context.close();
  }
}, 300_000);
