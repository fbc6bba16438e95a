import type { Browser, BrowserContext, Page } from 'playwright-core';
import { checkAccessible } from './accessibility';

/** What the console's Chromium tests share: axe-core in both colour schemes and both widths, screenshots, sign-in. */

export const checkConsolePage = checkAccessible;

export async function newConsoleContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
}

export async function signInAt(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

export async function bearerAt(baseUrl: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return `Bearer ${((await res.json()) as { accessToken: string }).accessToken}`;
}
