import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { createAppServer, createHttpServer, madeWithPrototypes, type HttpServer } from '../../src/lib/http-server';
import { makeUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 33: the service's HTTP server makes every request and response object with the app's prototypes
 * (`app.request`, `app.response`), so that Express's `app.handle` has no prototype to change (the change is what made
 * every object of a request slow: docs/performance.md). What a client sees through that server is the service's
 * usual answers. The other suites reach the app through the same server: supertest's `request(app)` and
 * `app.listen` make it with createAppServer (test/helpers/app-server-setup.ts), as the last test here shows.
 */
let t: TestApp;
let server: HttpServer;
let base: string;
const made: boolean[] = [];
beforeAll(async () => {
  t = await createTestApp();
  server = createAppServer(t.app);
  // Before Express sees it: every request and response of this server is made with the app's prototypes.
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    made.push(Object.getPrototypeOf(req) === t.app.request && Object.getPrototypeOf(res) === t.app.response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

describe('the objects are made with the prototypes', () => {
  test("a listener sees the app's prototypes before Express runs, and Node's classes still hold", async () => {
    const app = express();
    const seen: unknown[] = [];
    const own = createHttpServer(
      (req, res) => {
        seen.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
        seen.push(req instanceof http.IncomingMessage, res instanceof http.ServerResponse);
        app(req, res);
      },
      { prototypes: { request: app.request, response: app.response } },
    );
    app.get('/x', (req, res) => {
      // Express's own request and response API, from the prototypes.
      res.status(201).json({ path: req.path, accepts: req.accepts('json'), same: Object.getPrototypeOf(req) === app.request });
    });
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
    try {
      const res = await request(own).get('/x');
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ path: '/x', accepts: 'json', same: true });
      expect(seen).toEqual([true, true, true, true]);
    } finally {
      await new Promise((resolve) => own.close(resolve));
    }
  });

  test('prototypes that are not a request and a response are refused at once', () => {
    expect(() => madeWithPrototypes({ request: {}, response: express().response })).toThrow(TypeError);
    expect(() => madeWithPrototypes({ request: express().response, response: express().request })).toThrow(TypeError);
  });
});

describe("the service's answers through its own server", () => {
  test('GET /health: 200 with the security headers and a request id; HEAD the headers only', async () => {
    const res = await fetch(`${base}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'OK' });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const head = await fetch(`${base}/health`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  test('a discovery document with its ETag, and 304 when it is named again', async () => {
    const path = '/.well-known/openid-configuration';
    const first = await fetch(`${base}${path}`);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { issuer: string }).issuer).toBe(t.config.baseUrl);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"/);
    const again = await fetch(`${base}${path}`, { headers: { 'If-None-Match': etag ?? '' } });
    expect(again.status).toBe(304);
  });

  test('a JSON body refused in the contract shape, an unknown route 404, a page redirect, a form post', async () => {
    const login = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'not an address', password: 'x' }),
    });
    expect(login.status).toBe(400);
    expect(await login.json()).toMatchObject({ error: 'validation_error' });

    const missing = await fetch(`${base}/api/no-such-route`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'not_found', message: 'Route GET /api/no-such-route not found' });

    const home = await fetch(`${base}/`, { redirect: 'manual' });
    expect(home.status).toBe(302);
    expect(home.headers.get('location')).toMatch(/\/login$/);

    const token = await fetch(`${base}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=nobody&client_secret=wrong',
    });
    expect(token.status).toBe(401);
    expect(await token.json()).toMatchObject({ error: 'invalid_client' });
  });

  test('sign-in with a cookie, then /api/auth/me with the access token, on one keep-alive connection', async () => {
    const { email, password } = await makeUser(t);
    const signedIn = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.get('set-cookie')).toMatch(/HttpOnly/i);
    const { accessToken } = (await signedIn.json()) as { accessToken: string };
    for (let i = 0; i < 3; i++) {
      const me = await fetch(`${base}/api/auth/me`, { headers: { authorization: `Bearer ${accessToken}` } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { user: { email: string } }).user.email).toBe(email);
    }
  });

  test("supertest's request(app) reaches the app through the service's own server too", async () => {
    const test = request(t.app).get('/health');
    const { app: target } = test as unknown as { app: http.Server & { drain?: unknown } };
    // createAppServer's server, with its drain (Node's own http.Server has none), its objects made with the prototypes.
    expect(target).toBeInstanceOf(http.Server);
    expect(typeof target.drain).toBe('function');
    const seen: boolean[] = [];
    target.prependListener('request', (req: http.IncomingMessage) => seen.push(Object.getPrototypeOf(req) === t.app.request));
    expect((await test).status).toBe(200);
    expect(seen).toEqual([true]);
  });

  test('every request those tests sent through the server was made with the prototypes', () => {
    expect(made.length).toBeGreaterThanOrEqual(10);
    expect(made.every(Boolean)).toBe(true);
  });
});
