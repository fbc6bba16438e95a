import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeClient, makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * RP-initiated logout in a real Chromium: a sign-out link from a client that cannot name the signed-in user shows the
 * confirmation page; "Sign out" (the CSRF-protected form) ends the SSO session and lands on the signed-out page.
 */
let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  ({ t, baseUrl, stop } = await createListeningTestApp());
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await stop?.();
});

test('confirmation page, then the signed-out page; the session is gone', async () => {
  const user = await makeUser(t);
  const client = await makeClient(t, { name: 'Grafana' });
  const page = await browser.newPage();
  await page.goto(`${baseUrl}/login`);
  await page.fill('#email', user.email);
  await page.fill('#password', user.password);
  await Promise.all([page.waitForURL(`${baseUrl}/login`), page.click('button[type=submit]')]);
  expect(await page.textContent('h1')).toContain('signed in');

  await page.goto(`${baseUrl}/api/oauth/logout?client_id=${client.clientId}`);
  expect(await page.textContent('h1')).toBe('Sign out?');
  expect(await page.textContent('main')).toContain('Grafana');
  expect(await page.textContent('main')).toContain(user.email);
  fs.mkdirSync('test-output', { recursive: true });
  await page.screenshot({ path: 'test-output/oidc-logout-confirm.png', fullPage: true });

  await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
  expect(await page.textContent('h1')).toBe('You are signed out');
  await page.screenshot({ path: 'test-output/oidc-logout-signed-out.png', fullPage: true });
  const me = await page.request.get(`${baseUrl}/api/auth/me`);
  expect(me.status()).toBe(401);
  await page.close();
});
