import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { checkAccessible } from '../helpers/accessibility';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeClient, makeUser } from '../helpers/factories';
import { authorizeParams, authorizePath, createListeningTestApp } from '../helpers/oauth';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp';
import type { TestApp } from '../helpers/test-app';

/**
 * Sign-in by email in Chromium with the mail captured by a real SMTP server: the button on /login, the code page, the
 * code typed; the link opened in the same browser and in another one (confirmation first); the pages axe-clean in
 * English and German at 1280 and 320 px. PAGES_SHOTS=<dir> writes screenshots.
 */
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;
let smtp: TestSmtpServer;
const SHOTS = process.env.PAGES_SHOTS;

beforeAll(async () => {
  smtp = await startSmtpServer();
  // COOKIE_SECURE: the same-browser binding is a __Host- cookie, none without it (docs/passwords.md).
  ({
    t,
    baseUrl,
    stop: stopApp,
  } = await createListeningTestApp({ SMTP_URL: smtp.url, BRAND_NAME: 'Acme Login', COOKIE_SECURE: 'true' }, { mailer: 'smtp' }));
  browser = await launchChromium();
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopApp?.();
  await smtp?.close();
});

async function mailFor(email: string, count: number) {
  const mails = await smtp.waitForMails(email, count);
  expect(mails.length).toBeGreaterThanOrEqual(count);
  const mail = mails[count - 1]!;
  const link = /(\/login\/email\?token=[\w-]+)/.exec(mail.text)![1]!;
  const code = /: (\d{6})\s*$/m.exec(mail.text)![1]!;
  return { mail, link, code };
}

test('from an app: "Email me a sign-in link", the code from the mail, back to the app', async () => {
  const user = await makeUser(t);
  const client = await makeClient(t, { name: 'Payroll', redirectUris: [`${baseUrl}/callback-not-served`] });
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  try {
    await page.goto(`${baseUrl}${authorizePath(authorizeParams(client).params)}`);
    await page.getByLabel('Email address').fill(user.email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    await page.getByText('to continue to Payroll').waitFor();
    await checkAccessible(page, 'email-code', SHOTS);
    const { mail, code } = await mailFor(user.email, 1);
    expect(mail.subject).toBe('Your sign-in link for Acme Login');
    await page.getByLabel('Code from the email').fill(code === '000000' ? '000001' : '000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That code is not valid or has expired.').first().waitFor();
    await checkAccessible(page, 'email-code-error', SHOTS);
    await page.getByLabel('Code from the email').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signed in: the authorization continues to the consent page of the app.
    await page.waitForURL(/\/consent\?request_id=/);
    await page.getByText('Payroll').first().waitFor();
  } finally {
    await context.close();
  }
}, 90_000);

test('the link: the same browser is signed in at once; another browser is asked first (German)', async () => {
  const user = await makeUser(t);
  const asking = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
  const other = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 }, locale: 'de-DE' });
  try {
    const page = await asking.newPage();
    await page.goto(`${baseUrl}/login`);
    await page.getByLabel('Email address').fill(user.email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    const first = await mailFor(user.email, 1);
    await page.goto(`${baseUrl}${first.link}`);
    await page.getByRole('heading', { name: 'You are signed in' }).waitFor();
    await page.getByText(user.email).waitFor();

    await page.goto(`${baseUrl}/login`);
    await asking.clearCookies();
    await page.goto(`${baseUrl}/login`);
    await page.getByLabel('Email address').fill(user.email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    const second = await mailFor(user.email, 2);
    const elsewhere = await other.newPage();
    await elsewhere.goto(`${baseUrl}${second.link}`);
    await elsewhere.getByRole('heading', { name: 'Auf diesem Gerät anmelden?' }).waitFor();
    await checkAccessible(elsewhere, 'email-link-confirm-de', SHOTS);
    expect((await other.cookies()).some((c) => c.name === 'accessToken')).toBe(false);
    await elsewhere.getByRole('button', { name: 'Hier anmelden' }).click();
    await elsewhere.getByRole('heading', { name: 'Sie sind angemeldet' }).waitFor();
    // Used: opening it again is the invalid-link page.
    await elsewhere.goto(`${baseUrl}${second.link}`);
    await elsewhere.getByRole('heading', { name: 'Dieser Link ist nicht gültig' }).waitFor();
    await checkAccessible(elsewhere, 'email-link-invalid-de', SHOTS);
  } finally {
    await asking.close();
    await other.close();
  }
}, 90_000);

test('/login with the button, in German, is accessible', async () => {
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 }, locale: 'de-DE' });
  try {
    const page = await context.newPage();
    await page.goto(`${baseUrl}/login`);
    await page.getByRole('button', { name: 'Anmeldelink per E-Mail senden' }).waitFor();
    await checkAccessible(page, 'login-email-button-de', SHOTS);
  } finally {
    await context.close();
  }
});
