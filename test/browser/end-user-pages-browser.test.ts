import fs from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { checkAccessible } from '../helpers/accessibility';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeClient, makeUser } from '../helpers/factories';
import { nextStep, totpCode } from '../helpers/mfa';
import { authorizeParams, authorizePath, createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * The end-user pages of issue 24 in Chromium: the sign-up journey, the recovery-codes panel (focus, copy, download,
 * "I have saved them"), and axe-core WCAG 2.1 AA of every new or changed page in the light and dark colour schemes,
 * in English and German, at 1280 and 320 px. PAGES_SHOTS=<dir> also writes a screenshot of each.
 */
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;
const SHOTS = process.env.PAGES_SHOTS;

beforeAll(async () => {
  ({ t, baseUrl, stop: stopApp } = await createListeningTestApp({ BRAND_NAME: 'Acme Login', BRAND_COLOR: '#7c3aed' }));
  browser = await launchChromium();
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopApp?.();
});

async function checkPage(page: Page, name: string): Promise<void> {
  await checkAccessible(page, name, SHOTS);
}

async function newContext(locale = 'en-US'): Promise<BrowserContext> {
  return browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 }, locale, acceptDownloads: true });
}

test('a new person signs up from an app, is told to check the mail, confirms the address and continues to the app', async () => {
  const client = await makeClient(t, { name: 'Payroll', redirectUris: [`${baseUrl}/callback-not-served`] });
  const context = await newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${baseUrl}${authorizePath(authorizeParams(client).params)}`);
    await page.getByText('to continue to Payroll').first().waitFor();
    await checkPage(page, 'login');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await page.getByText('to continue to Payroll').waitFor();
    // A wrong repeat is explained next to the field.
    const email = `new-${Date.now()}@example.test`;
    await page.getByLabel('First name').fill('Nora');
    await page.getByLabel('Last name').fill('New');
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill('correct-horse-1');
    await page.getByLabel('Repeat the password').fill('correct-horse-2');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('The two passwords are not the same.').first().waitFor();
    await checkPage(page, 'register-error');
    await page.getByLabel('Password', { exact: true }).fill('correct-horse-1');
    await page.getByLabel('Repeat the password').fill('correct-horse-1');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    await checkPage(page, 'register-done');
    const mail = t.mails.find((m) => m.to === email)!;
    expect(mail.subject).toBe('Confirm your email address for Acme Login');
    const link = /(\/verify-email\?token=\S+)/.exec(mail.text)![1]!;
    await page.goto(`${baseUrl}${link}`);
    await page.getByRole('button', { name: 'Confirm my email address' }).click();
    await page.getByRole('heading', { name: 'Email address confirmed' }).waitFor();
    expect((await t.db('users').where({ email }).first()).email_verified).toBe(true);
  } finally {
    await context.close();
  }
});

test('recovery codes: first on the page and focused, copy announces, download is a .txt of the codes, "I have saved them" leaves', async () => {
  const user = await makeUser(t);
  const context = await newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  const page = await context.newPage();
  try {
    await page.goto(`${baseUrl}/login`);
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.goto(`${baseUrl}/account#second-factors`);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = (await page.locator('#totp-secret').textContent())!.trim();
    await page.getByLabel('Code from the app').fill(totpCode(t, secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    nextStep(t);
    const panel = page.locator('#recovery-codes');
    await panel.waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('recovery-codes');
    // At the top: visible without scrolling.
    expect((await panel.boundingBox())!.y).toBeLessThan(200);
    const codes = (await page.locator('#recovery-codes-list code').allTextContents()).map((c) => c.trim());
    expect(codes.length).toBeGreaterThanOrEqual(8);
    await checkPage(page, 'recovery-codes');

    await page.getByRole('button', { name: 'Copy codes' }).click();
    await page.getByText('Codes copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(codes.join('\n'));

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download as .txt' }).click()]);
    expect(download.suggestedFilename()).toBe('Acme-Login-recovery-codes.txt');
    const file = fs.readFileSync((await download.path())!, 'utf8');
    for (const code of codes) expect(file).toContain(code);

    await page.getByRole('link', { name: 'I have saved them' }).click();
    await page.waitForURL(/\/account#second-factors$/);
    expect(await page.locator('#recovery-codes').count()).toBe(0);
  } finally {
    await context.close();
  }
});

test('without JavaScript the codes are readable and the download still works', async () => {
  const user = await makeUser(t);
  const context = await browser.newContext({ javaScriptEnabled: false, acceptDownloads: true });
  const page = await context.newPage();
  try {
    await page.goto(`${baseUrl}/login`);
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.goto(`${baseUrl}/account`);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = (await page.locator('#totp-secret').textContent())!.trim();
    await page.getByLabel('Code from the app').fill(totpCode(t, secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    nextStep(t);
    expect(await page.locator('#recovery-codes-list code').count()).toBeGreaterThanOrEqual(8);
    expect(await page.getByRole('button', { name: 'Copy codes' }).isVisible()).toBe(false);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download as .txt' }).click()]);
    expect(download.suggestedFilename()).toBe('Acme-Login-recovery-codes.txt');
  } finally {
    await context.close();
  }
});

test('pages in German pass axe in both schemes: sign-in, sign-up, reset, 404, consent, account', async () => {
  const context = await newContext('de-DE');
  const page = await context.newPage();
  try {
    await page.goto(`${baseUrl}/login`);
    expect(await page.getAttribute('html', 'lang')).toBe('de');
    await page.getByRole('heading', { name: 'Anmelden' }).waitFor();
    await checkPage(page, 'login-de');
    await page.goto(`${baseUrl}/register`);
    await checkPage(page, 'register-de');
    await page.goto(`${baseUrl}/forgot-password`);
    await checkPage(page, 'forgot-de');
    const res = await page.goto(`${baseUrl}/no-such-page`);
    expect(res!.status()).toBe(404);
    await page.getByRole('heading', { name: 'Seite nicht gefunden' }).waitFor();
    await checkPage(page, 'not-found-de');
    const client = await makeClient(t, { name: 'Wiki', redirectUris: [`${baseUrl}/cb`] });
    const user = await makeUser(t);
    await page.goto(`${baseUrl}${authorizePath(authorizeParams(client).params)}`);
    await page.getByLabel('E-Mail-Adresse').fill(user.email);
    await page.getByLabel('Passwort').fill(user.password);
    await page.getByRole('button', { name: 'Anmelden', exact: true }).click();
    await page.getByRole('heading', { name: 'Wiki möchte auf Ihr Konto zugreifen' }).waitFor();
    await checkPage(page, 'consent-de');
    await page.goto(`${baseUrl}/account`);
    await page.getByRole('heading', { name: 'Ihr Konto' }).waitFor();
    await checkPage(page, 'account-de');
  } finally {
    await context.close();
  }
});
