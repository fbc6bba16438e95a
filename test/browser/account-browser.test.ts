import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/ensure-chromium';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * The account pages in a real browser that already holds the SSO cookies: our own form posts must carry a real
 * Origin (Referrer-Policy) and pass the CSRF checks; the mailed links work end to end.
 */
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  const listening = await createListeningTestApp();
  ({ t, baseUrl } = listening);
  stopApp = listening.stop;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopApp?.();
});

function linkFromLastMail(path: '/verify-email' | '/set-password'): string {
  const mail = t.mails[t.mails.length - 1]!;
  const match = new RegExp(`https?://[^\\s]+${path}\\?token=[A-Za-z0-9_-]+`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in: ${mail.text}`);
  return match[0];
}

async function signInThroughForm(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'You are signed in' }).waitFor();
}

test('signed in, a person confirms their address and resets their password through the mailed links', async () => {
  const email = `browser-${Date.now()}@example.test`;
  const register = await fetch(`${baseUrl}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ first_name: 'Pat', last_name: 'Browser', email, password: 'first-password' }),
  });
  expect(register.status).toBe(201);

  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await signInThroughForm(page, email, 'first-password');
    expect((await context.cookies()).map((c) => c.name)).toEqual(expect.arrayContaining(['accessToken', 'refreshToken']));

    await page.goto(linkFromLastMail('/verify-email'));
    await page.getByRole('button', { name: 'Confirm my email address' }).click();
    await page.getByRole('heading', { name: 'Email address confirmed' }).waitFor();
    expect((await t.db('users').where({ email }).first()).email_verified).toBe(true);

    // Still signed in (the SSO cookies ride along on these posts).
    await page.goto(`${baseUrl}/forgot-password`);
    await page.getByLabel('Email address').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();

    await page.goto(linkFromLastMail('/set-password'));
    await page.getByLabel('New password', { exact: true }).fill('second-password');
    await page.getByLabel('Repeat the new password').fill('second-password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('heading', { name: 'Password set' }).waitFor();

    await signInThroughForm(page, email, 'second-password');
  } finally {
    await context.close();
  }
}, 60_000);

test('a signed-out person finds the reset form from the sign-in page', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${baseUrl}/login`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/forgot-password');
  } finally {
    await context.close();
  }
});
