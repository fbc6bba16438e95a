import fs from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { enrolTotp, totpCode } from '../helpers/mfa';
import { authorizeParams, basicAuth, heldPort } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Second factors in a real browser: passkeys through Chromium's virtual WebAuthn authenticator (CDP), TOTP
 * enrolment on /account reading the secret from the page, and the OAuth authorize flow through the second step.
 * Chromium refuses WebAuthn on IP addresses, so BASE_URL is http://localhost:PORT (a secure context).
 */
const ROOT = path.resolve(__dirname, '../..');
const OUTPUT = path.join(ROOT, 'test-output');
let t: TestApp;
let baseUrl: string;
let server: Server;
let browser: Browser;

beforeAll(async () => {
  // The port is held from the start; the app answers on it once made.
  let port: number;
  ({ server, port } = await heldPort('127.0.0.1'));
  baseUrl = `http://localhost:${port}`;
  t = await createTestApp({ env: { BASE_URL: baseUrl } });
  server.on('request', t.app);
  browser = await launchChromium(['--host-resolver-rules=MAP localhost 127.0.0.1']);
  fs.mkdirSync(OUTPUT, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
});

/** A page with a virtual platform authenticator (CTAP2, internal, resident keys, user verification that succeeds). */
async function pageWithAuthenticator(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return page;
}

async function signInWithPassword(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

async function screenshots(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 1024, height: 800 });
  await page.screenshot({ path: path.join(OUTPUT, `${name}.png`), fullPage: true });
  await page.setViewportSize({ width: 320, height: 640 });
  await page.screenshot({ path: path.join(OUTPUT, `${name}-320.png`), fullPage: true });
  // Nothing is wider than a 320 px screen.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
  await page.setViewportSize({ width: 1024, height: 800 });
}

test('a passkey registered on /account signs in alone after signing out', async () => {
  const user = await makeUser(t, { firstName: 'Ada', lastName: 'Passkey' });
  const context = await browser.newContext();
  try {
    const page = await pageWithAuthenticator(context);
    await signInWithPassword(page, user.email, user.password);
    await page.getByRole('heading', { name: 'You are signed in' }).waitFor();
    await page.getByRole('link', { name: 'Manage your account' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();

    await page.getByLabel('Name of the new passkey').fill('Virtual key');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('The passkey was added.').waitFor();
    await page.getByText('Virtual key', { exact: true }).waitFor();
    const stored = await t.db('webauthn_credentials').where({ user_id: user.id });
    expect(stored).toHaveLength(1);
    await screenshots(page, 'account');

    await page.getByRole('button', { name: 'Sign out', exact: true }).last().click();
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
    expect((await context.cookies()).filter((c) => c.name === 'accessToken')).toEqual([]);

    await page.goto(`${baseUrl}/login`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByRole('heading', { name: 'You are signed in' }).waitFor();
    expect(await page.textContent('body')).toContain(user.email);
    const me = await page.evaluate(async () => (await fetch('/api/auth/me')).json());
    expect(me.user).toMatchObject({ id: user.id, amr: ['hwk'] });
  } finally {
    await context.close();
  }
});

test('TOTP enrolment on /account, reading the secret from the page; the next sign-in asks for a code', async () => {
  const user = await makeUser(t);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await signInWithPassword(page, user.email, user.password);
    await page.goto(`${baseUrl}/account`);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    await page.getByRole('img', { name: 'QR code of the authenticator secret' }).waitFor();
    const secret = (await page.locator('#totp-secret').textContent())!.trim();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await screenshots(page, 'account-totp-setup');
    await page.getByLabel('Code from the app').fill(totpCode(t, secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByText('shown only once').waitFor();
    expect(await page.locator('ol.codes li').count()).toBe(10);
    t.clock.advance(30);

    // Signing in again now takes the code.
    await page.getByRole('button', { name: 'Sign out', exact: true }).last().click();
    await signInWithPassword(page, user.email, user.password);
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await page.getByLabel('Code from your authenticator app').fill(totpCode(t, secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'You are signed in' }).waitFor();
  } finally {
    await context.close();
  }
});

test('the OAuth authorize flow for a user with TOTP goes through the second step', async () => {
  const user = await makeUser(t);
  const { secret } = await enrolTotp(t, (await signIn(t, user)).agent);
  const client = await makeClient(t, { name: 'Team Wiki', redirectUris: ['https://wiki.test/callback'] });
  const { params, verifier, state } = authorizeParams(client);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    let callback: URL | undefined;
    await page.route('https://wiki.test/**', async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in' });
    });
    await page.goto(`${baseUrl}/api/oauth/authorize?${new URLSearchParams(params)}`);
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await screenshots(page, 'login-second-step');
    await page.getByLabel('Code from your authenticator app').fill(totpCode(t, secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: /Team Wiki wants to access your account/ }).waitFor();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(/^https:\/\/wiki\.test\/callback/);
    expect(callback?.searchParams.get('state')).toBe(state);
    const code = callback!.searchParams.get('code')!;
    const token = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: 'https://wiki.test/callback', code_verifier: verifier });
    expect(token.status).toBe(200);
    expect(t.ctx.jwt.verifyAccess(token.body.access_token, t.clock.now())!.amr).toEqual(['pwd', 'otp']);
  } finally {
    await context.close();
  }
});
