import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeClient, makeUser } from '../helpers/factories';
import { createListeningTestApp, freePort } from '../helpers/oauth';
import { ROOT } from '../helpers/processes';
import type { TestApp } from '../helpers/test-app';

/**
 * examples/express-app as a newcomer runs it: its own process, openid-client (OpenID Connect) against this server, a real browser
 * signing in through the hosted login and consent pages, an expired access token refreshed once, and sign-out
 * revoking the app's session at the server and signing the browser out of the SSO too (RP-initiated logout).
 */
let t: TestApp;
let ssoUrl: string;
let stopSso: () => Promise<void>;
let app: ChildProcess | undefined;
let appUrl: string;
let appOutput = '';
let browser: Browser;

beforeAll(async () => {
  const listening = await createListeningTestApp();
  ({ t, baseUrl: ssoUrl } = listening);
  stopSso = listening.stop;
  const port = await freePort();
  appUrl = `http://127.0.0.1:${port}`;
  const client = await makeClient(t, {
    name: 'Example app',
    redirectUris: [`${appUrl}/callback`],
    postLogoutRedirectUris: [`${appUrl}/`],
    scopes: ['openid', 'profile', 'email'],
  });
  app = spawn(process.execPath, [path.join(ROOT, 'examples/express-app/server.mjs')], {
    env: {
      ...process.env,
      SSO_URL: ssoUrl,
      CLIENT_ID: client.clientId,
      CLIENT_SECRET: client.clientSecret,
      APP_URL: appUrl,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  app.stdout!.on('data', (d) => (appOutput += d));
  app.stderr!.on('data', (d) => (appOutput += d));
  const deadline = Date.now() + 20_000;
  while (!appOutput.includes('example app on')) {
    if (app.exitCode !== null || Date.now() > deadline) throw new Error(`example app did not start: ${appOutput}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (app && app.exitCode === null) {
    const exited = new Promise((r) => app!.once('exit', r));
    app.kill('SIGTERM');
    await exited;
  }
  await stopSso?.();
});

test('sign in through service-sso, stay signed in past the access token, sign out', async () => {
  const user = await makeUser(t, { firstName: 'Ada', lastName: 'Example' });
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(appUrl);
    await page.getByRole('link', { name: 'Sign in with service-sso' }).click();
    // The hosted sign-in page of the server, then its consent page.
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Signed in as Ada Example').waitFor();
    expect(new URL(page.url()).origin).toBe(appUrl);
    // The id_token the library verified names this user.
    await page.getByText(`Account id (id_token sub): ${user.id}`).waitFor();
    fs.mkdirSync(path.join(ROOT, 'test-output'), { recursive: true });
    await page.screenshot({ path: path.join(ROOT, 'test-output', 'example-app-signed-in.png'), fullPage: true });

    const sessions = () => t.db('sessions').where({ user_id: user.id }).whereNotNull('client_id').select('id', 'revoked_at');
    expect(await sessions()).toHaveLength(1);
    const rotations = async () => Number((await t.db('refresh_tokens').count<{ count: string }[]>('* as count'))[0]!.count);
    const before = await rotations();

    // A day later the access token has expired: the app refreshes once and carries on.
    t.clock.advance(25 * 3600);
    await page.reload();
    await page.getByText('Signed in as Ada Example').waitFor();
    expect(await rotations()).toBe(before + 1);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are not signed in.').waitFor();
    // Back in the app through the registered post_logout_redirect_uri, with no confirmation page on the way.
    expect(page.url()).toBe(`${appUrl}/`);
    const [session] = await sessions();
    expect(session!.revoked_at).not.toBeNull();
    // The browser's own SSO session ended too: every session of the user is revoked, and signing in again asks for
    // the password instead of going straight to the app.
    const live = await t.db('sessions').where({ user_id: user.id }).whereNull('revoked_at').select('id');
    expect(live).toEqual([]);
    await page.getByRole('link', { name: 'Sign in with service-sso' }).click();
    await page.getByLabel('Password').waitFor();
    expect(new URL(page.url()).origin).toBe(ssoUrl);
  } finally {
    await context.close();
  }
}, 60_000);

test('a person who denies consent lands back in the app with a clear message', async () => {
  const user = await makeUser(t);
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${appUrl}/login`);
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByText('Sign-in failed: access_denied').waitFor();
  } finally {
    await context.close();
  }
}, 60_000);
