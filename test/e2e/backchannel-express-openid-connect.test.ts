import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { startWebhookWorker, type WebhookWorker } from '../../src/services/webhooks/queue';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { csrfFrom, createListeningTestApp, heldPort } from '../helpers/oauth';
import { loadEsm, signInAndApprove } from '../helpers/oidc';
import { RpBrowser } from '../helpers/rp-browser';
import type { TestApp } from '../helpers/test-app';

/**
 * Interop (issue 34, OpenID Connect Back-Channel Logout 1.0) with a relying party nobody here wrote: an Express app
 * using Auth0's express-openid-connect, unchanged, with its `backchannelLogout` option. The person signs in to it
 * through this server (discovery, authorization code, the library's own id_token checks); then the session here ends
 * (the Sign out button of our pages, an administrator's revocation) and this server's queue POSTs a logout token to the
 * route the library mounts; the library verifies it itself and, on the next request, treats the person as signed out.
 */
type Auth = (params: Record<string, unknown>) => http.RequestListener;
interface ExpressModule {
  (): http.RequestListener & { use: (...a: unknown[]) => void; get: (...a: unknown[]) => void; listen: (...a: unknown[]) => http.Server };
}

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let worker: WebhookWorker;
let admin: string;
let appOrigin: string;
let appServer: http.Server;
let clientId: string;

/** The logged-out sid/sub marks express-openid-connect keeps: an express-session style store (get/set/destroy). */
const marks = new Map<string, unknown>();
const store = {
  get: (key: string, cb: (err: unknown, value?: unknown) => void) => cb(null, marks.get(key)),
  set: (key: string, value: unknown, cb: (err?: unknown) => void) => {
    marks.set(key, value);
    cb();
  },
  destroy: (key: string, cb: (err?: unknown) => void) => {
    marks.delete(key);
    cb();
  },
};
/** What the library's backchannel-logout route answered, as this server's deliveries record it. */
const answered: number[] = [];

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
  admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
  worker = await startWebhookWorker(t.ctx, { connectionString: t.databaseUrl, retryDelaysSeconds: [0.2, 0.2], pollIntervalMs: 100 });
  // The app's port is held from the start; the app answers on it once made.
  let port: number;
  ({ server: appServer, port } = await heldPort('127.0.0.1'));
  appOrigin = `http://127.0.0.1:${port}`;
  const created = await request(t.app)
    .post('/api/admin/oauth-clients')
    .set('Authorization', admin)
    .send({
      name: 'Express app',
      redirect_uris: [`${appOrigin}/callback`],
      backchannel_logout_uri: `${appOrigin}/backchannel-logout`,
      backchannel_logout_session_required: true,
    });
  expect(created.status).toBe(201);
  clientId = created.body.client.client_id;

  // The library and Express as Node loads them (openid-client 6 is ESM-only; see loadEsm).
  const express = loadEsm<ExpressModule>('express');
  const { auth } = loadEsm<{ auth: Auth }>('express-openid-connect');
  const app = express();
  app.use(
    auth({
      issuerBaseURL: baseUrl,
      baseURL: appOrigin,
      clientID: clientId,
      clientSecret: created.body.client_secret,
      secret: 'an-express-openid-connect-session-secret-0123456789',
      authRequired: false,
      idpLogout: false,
      authorizationParams: { response_type: 'code', scope: 'openid profile email' },
      backchannelLogout: { store },
    }),
  );
  app.get('/profile', (req: { oidc: { isAuthenticated(): boolean; user?: { sub?: string } } }, res: http.ServerResponse) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ authenticated: req.oidc.isAuthenticated(), sub: req.oidc.user?.sub ?? null }));
  });
  appServer.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.url === '/backchannel-logout') res.on('finish', () => answered.push(res.statusCode));
    (app as unknown as http.RequestListener)(req, res);
  });
  expect((appServer.address() as AddressInfo).port).toBe(port);
}, 60_000);

afterAll(async () => {
  appServer?.closeAllConnections();
  await new Promise<void>((resolve) => (appServer ? appServer.close(() => resolve()) : resolve()));
  await worker?.stop();
  await stop?.();
});

/** The person signs in to the Express app through this server; returns both browsers. */
async function signInToApp(user: { email: string; password: string }) {
  const app = new RpBrowser(appOrigin);
  const login = await app.go('/login');
  expect(login.status).toBe(302);
  const authorizationUrl = new URL(login.location);
  expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${baseUrl}/api/oauth/authorize`);
  const { callback, browser } = await signInAndApprove(baseUrl, authorizationUrl, user);
  expect(`${callback.origin}${callback.pathname}`).toBe(`${appOrigin}/callback`);
  // The library exchanges the code and checks the id_token itself, then starts its own session.
  const done = await app.go(callback.pathname + callback.search);
  if (done.status !== 302) throw new Error(`express-openid-connect's callback answered ${done.status}: ${done.text.slice(0, 500)}`);
  expect(app.has('appSession')).toBe(true);
  return { app, browser };
}

async function profile(app: RpBrowser) {
  const res = await app.go('/profile');
  expect(res.status).toBe(200);
  return JSON.parse(res.text) as { authenticated: boolean; sub: string | null };
}

/** Waits until the library has answered `n` logout tokens. */
async function answeredAtLeast(n: number) {
  for (let i = 0; i < 300 && answered.length < n; i++) await new Promise((r) => setTimeout(r, 100));
  expect(answered.length).toBeGreaterThanOrEqual(n);
}

test('signed out of the Express app when the person signs out here (the Sign out button)', async () => {
  const user = await makeUser(t);
  const { app, browser } = await signInToApp(user);
  expect(await profile(app)).toEqual({ authenticated: true, sub: user.id });

  const before = answered.length;
  const csrf = await csrfFrom(browser, '/login');
  expect((await browser.post('/logout').type('form').send({ csrf })).status).toBe(303);
  await answeredAtLeast(before + 1);
  expect(answered[before]).toBeGreaterThanOrEqual(200);
  expect(answered[before]).toBeLessThan(300);

  // The library verified the token (its own checks) and marks the session; the app sees the person signed out.
  expect(await profile(app)).toEqual({ authenticated: false, sub: null });
  const [delivery] = await t.db('backchannel_logout_deliveries').where({ client_id: clientId, user_id: user.id });
  expect(delivery).toMatchObject({ status: 'delivered', attempts: 1 });
  expect(delivery.last_response_status).toBe(answered[before]);
});

test("an administrator's revocation signs the person out of the Express app; another person stays signed in", async () => {
  const [victim, bystander] = [await makeUser(t), await makeUser(t)];
  const ended = await signInToApp(victim);
  const kept = await signInToApp(bystander);
  const sessions = await t.db('sessions').where({ user_id: victim.id }).whereNull('client_id').whereNull('revoked_at');
  expect(sessions).toHaveLength(1);

  const before = answered.length;
  const res = await request(t.app).delete(`/api/users/${victim.id}/sessions/${sessions[0].id}`).set('Authorization', admin);
  expect(res.status).toBe(204);
  await answeredAtLeast(before + 1);
  expect(await profile(ended.app)).toEqual({ authenticated: false, sub: null });
  expect(await profile(kept.app)).toEqual({ authenticated: true, sub: bystander.id });
});

test("the library's endpoint refuses a logout token this server did not sign", async () => {
  const forged = [
    Buffer.from(JSON.stringify({ alg: 'none', typ: 'logout+jwt' })).toString('base64url'),
    Buffer.from(JSON.stringify({ iss: baseUrl, aud: clientId, sub: 'x', iat: Math.floor(Date.now() / 1000) })).toString('base64url'),
    '',
  ].join('.');
  const res = await fetch(`${appOrigin}/backchannel-logout`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ logout_token: forged }).toString(),
  });
  expect(res.status).toBe(400);
});
