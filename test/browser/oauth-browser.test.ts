import http from 'node:http';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/ensure-chromium';
import request from 'supertest';
import { makeClient, makeUser } from '../helpers/factories';
import { basicAuth, createListeningTestApp, heldPort, pkcePair } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;
let callbackServer: http.Server;
let callbackUrl: string;
const callbacks: URL[] = [];

beforeAll(async () => {
  const listening = await createListeningTestApp();
  ({ t, baseUrl } = listening);
  stopApp = listening.stop;
  let port: number;
  ({ server: callbackServer, port } = await heldPort('127.0.0.1'));
  callbackUrl = `http://127.0.0.1:${port}/callback`;
  callbackServer.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', callbackUrl);
    if (url.pathname === '/callback') callbacks.push(url);
    res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>Callback</title><h1>Back in the app</h1>');
  });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (callbackServer) {
    callbackServer.closeAllConnections();
    await new Promise<void>((resolve) => callbackServer.close(() => resolve()));
  }
  await stopApp?.();
});

function authorizationUrl(clientId: string, challenge: string, state: string): string {
  return `${baseUrl}/api/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: callbackUrl,
    scope: 'openid profile email',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })}`;
}

test('a real browser signs in, approves, and the app exchanges the code, reads userinfo, refreshes and revokes', async () => {
  const user = await makeUser(t, { firstName: 'Browser', lastName: 'User' });
  const client = await makeClient(t, { name: 'Browser Test App', redirectUris: [callbackUrl] });
  const { verifier, challenge } = pkcePair();
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(authorizationUrl(client.clientId, challenge, 'st-1'));
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();

    await page.waitForURL((url) => url.pathname === '/consent');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Browser Test App');
    await expect(page.getByText('See your email address').isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Approve' }).click();

    await page.waitForURL((url) => url.href.startsWith(callbackUrl));
    await expect(page.getByRole('heading', { name: 'Back in the app' }).isVisible()).resolves.toBe(true);
  } finally {
    await context.close();
  }
  const callback = callbacks.find((u) => u.searchParams.get('state') === 'st-1')!;
  expect(callback).toBeDefined();
  expect(callback.searchParams.get('state')).toBe('st-1');
  const code = callback.searchParams.get('code')!;
  expect(code).toBeTruthy();

  const token = await request(t.app)
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(client.clientId, client.clientSecret))
    .type('form')
    .send({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: callbackUrl });
  expect(token.status).toBe(200);

  const info = await request(t.app).get('/api/oauth/userinfo').set('Authorization', `Bearer ${token.body.access_token}`);
  expect(info.body).toMatchObject({ sub: user.id, name: 'Browser User', email: user.email });

  const refreshed = await request(t.app)
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(client.clientId, client.clientSecret))
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: token.body.refresh_token });
  expect(refreshed.status).toBe(200);

  const revoked = await request(t.app)
    .post('/api/oauth/revoke')
    .set('Authorization', basicAuth(client.clientId, client.clientSecret))
    .type('form')
    .send({ token: refreshed.body.refresh_token, token_type_hint: 'refresh_token' });
  expect(revoked.status).toBe(200);
  const after = await request(t.app).get('/api/oauth/userinfo').set('Authorization', `Bearer ${refreshed.body.access_token}`);
  expect(after.status).toBe(401);
});

test('a real browser denying consent lands on the callback with error=access_denied and state; a second visit after approval skips consent', async () => {
  const user = await makeUser(t);
  const client = await makeClient(t, { name: 'Second App', redirectUris: [callbackUrl] });
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(authorizationUrl(client.clientId, pkcePair().challenge, 'st-deny'));
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/consent');
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL((url) => url.href.startsWith(callbackUrl));
    const denied = new URL(page.url());
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe('st-deny');

    await page.goto(authorizationUrl(client.clientId, pkcePair().challenge, 'st-2'));
    await page.waitForURL((url) => url.pathname === '/consent');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((url) => url.href.startsWith(callbackUrl));

    await page.goto(authorizationUrl(client.clientId, pkcePair().challenge, 'st-3'));
    await page.waitForURL((url) => url.href.startsWith(callbackUrl));
    const skipped = new URL(page.url());
    expect(skipped.searchParams.get('code')).toBeTruthy();
    expect(skipped.searchParams.get('state')).toBe('st-3');
  } finally {
    await context.close();
  }
});

test('a wrong password in the browser shows the error on the form', async () => {
  const user = await makeUser(t);
  const client = await makeClient(t, { redirectUris: [callbackUrl] });
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(authorizationUrl(client.clientId, pkcePair().challenge, 's'));
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill('definitely-wrong');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Incorrect email or password.');
    expect(new URL(page.url()).pathname).toBe('/login');
  } finally {
    await context.close();
  }
});
