import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeClient } from './factories';
import { createServer, type Server } from 'node:http';
import net from 'node:net';
import { createTestApp, type TestApp } from './test-app';

export type TestClient = Awaited<ReturnType<typeof makeClient>>;

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** HTTP Basic credentials as RFC 6749 §2.3.1 wants them: each part form-urlencoded, then base64. */
export function basicAuth(clientId: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString('base64')}`;
}

export function authorizeParams(
  client: { clientId: string; redirectUris: string[] },
  overrides: Record<string, string | undefined> = {},
): { params: Record<string, string>; verifier: string; state: string } {
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(8).toString('hex');
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUris[0],
    scope: 'openid profile email',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
  const params = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return { params, verifier, state };
}

export function authorizePath(params: Record<string, string>): string {
  return `/api/oauth/authorize?${new URLSearchParams(params)}`;
}

/** The query parameters of a Location header. */
export function locationParams(location: string): URLSearchParams {
  return new URL(location).searchParams;
}

/** Signed-in agent -> authorize -> (approve when asked) -> code. */
export async function obtainCode<C extends Pick<TestClient, 'clientId' | 'redirectUris'>>(
  agent: TestAgent,
  client: C,
  overrides: Record<string, string | undefined> = {},
): Promise<{ code: string; verifier: string; state: string; redirectUri: string }> {
  const { params, verifier, state } = authorizeParams(client, overrides);
  const res = await agent.get(authorizePath(params));
  if (res.status !== 302) throw new Error(`authorize answered ${res.status} ${JSON.stringify(res.body)}`);
  let location: string = res.headers.location;
  const url = new URL(location);
  if (url.pathname === '/consent') {
    const requestId = url.searchParams.get('request_id')!;
    const approve = await agent.post('/api/oauth/authorize/approve').send({ request_id: requestId });
    if (approve.status !== 200) throw new Error(`approve answered ${approve.status} ${JSON.stringify(approve.body)}`);
    location = approve.body.redirect_url;
  }
  const code = locationParams(location).get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return { code, verifier, state, redirectUri: params.redirect_uri! };
}

export function exchangeCode(t: TestApp, client: TestClient, input: { code: string; verifier: string; redirectUri?: string }) {
  return request(t.app)
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(client.clientId, client.clientSecret))
    .type('form')
    .send({
      grant_type: 'authorization_code',
      code: input.code,
      code_verifier: input.verifier,
      redirect_uri: input.redirectUri ?? client.redirectUris[0],
    });
}

/** Full flow to an OAuth token response body for a signed-in agent. */
export async function issueOAuthTokens(
  t: TestApp,
  agent: TestAgent,
  client: TestClient,
  overrides: Record<string, string | undefined> = {},
): Promise<{ access_token: string; refresh_token: string; scope: string }> {
  const { code, verifier, redirectUri } = await obtainCode(agent, client, overrides);
  const res = await exchangeCode(t, client, { code, verifier, redirectUri });
  if (res.status !== 200) throw new Error(`token answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * oauth4webapi is ESM-only and jest's CommonJS module registry cannot load it (`export` syntax error). Node's own
 * loader (Module._load) bypasses jest's registry, and Node >= 20.19 loads ESM through require(), so the library
 * runs unmodified, with Node's real fetch. Types come from the package with resolution-mode import.
 */
export function loadOAuth4WebApi(): typeof import('oauth4webapi', { with: { 'resolution-mode': 'import' } }) {
  const nodeModule = require('node:module') as { _load(request: string, parent: unknown, isMain: boolean): unknown };
  return nodeModule._load(require.resolve('oauth4webapi'), null, false) as typeof import('oauth4webapi', {
    with: { 'resolution-mode': 'import' },
  });
}

/**
 * A free TCP port on 127.0.0.1, for a child process to listen on (an in-process server holds its port: heldPort).
 * Chosen below the kernel's ephemeral range (32768-60999 on Linux), in a block of 1,000 ports of this jest worker's
 * own (12000 + 1000 x (worker - 1)), and checked free by listening on it: a port the kernel handed out (port 0) could be
 * handed out again, to another worker's server or to any outgoing connection's local end, before the child listened,
 * and the child then failed with EADDRINUSE. Successive calls in a test file give successive ports.
 */
export async function freePort(): Promise<number> {
  const worker = Math.max(1, Number(process.env.JEST_WORKER_ID ?? '1')) - 1;
  const block = 12_000 + 1_000 * (worker % 16);
  for (let tries = 0; tries < 1_000; tries++) {
    nextPortInBlock = (nextPortInBlock + 1) % 1_000;
    const port = block + nextPortInBlock;
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${block}-${block + 999}`);
}
let nextPortInBlock = Math.floor(Math.random() * 1_000);

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * An HTTP server already listening on a port of its own (port 0 on `host`; every local address without one), for an
 * app that must know its own address before it is made: attach it with `server.on('request', handler)` once made. A
 * port found free (freePort) and listened on later can be taken in between by another worker's probe, and Express 5
 * hands that EADDRINUSE to the listen callback, which left a server that never listened (ECONNREFUSED in CI). freePort
 * stays for ports a child process listens on.
 */
export async function heldPort(host?: string): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (host === undefined) server.listen(0, () => resolve());
    else server.listen(0, host, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the test server has no port');
  return { server, port: address.port };
}

/** The app listening on a real 127.0.0.1 port with BASE_URL pointing at it (libraries and browsers do real HTTP). */
export async function createListeningTestApp(
  env: Record<string, string> = {},
  options: Omit<Parameters<typeof createTestApp>[0] & object, 'env'> = {},
): Promise<{ t: TestApp; baseUrl: string; stop: () => Promise<void> }> {
  // The port is held from the start (see heldPort), and the app answers on it once made.
  const { server, port } = await heldPort('127.0.0.1');
  const baseUrl = `http://127.0.0.1:${port}`;
  let t: TestApp;
  try {
    t = await createTestApp({ ...options, env: { BASE_URL: baseUrl, PORT: String(port), ...env } });
  } catch (err) {
    server.close();
    throw err;
  }
  server.on('request', t.app);
  return {
    t,
    baseUrl,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await t.close();
    },
  };
}

/** GET a page with a form and return its hidden csrf field (the agent keeps the csrf cookie). */
export async function csrfFrom(agent: TestAgent, path: string): Promise<string> {
  const res = await agent.get(path);
  const match = /name="csrf" value="([^"]+)"/.exec(res.text);
  if (!match) throw new Error(`no csrf field on ${path}: ${res.status}`);
  return match[1]!;
}
