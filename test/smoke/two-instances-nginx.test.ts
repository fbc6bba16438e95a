import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from 'redis';
import { NGINX_PATH } from '../helpers/ensure-nginx';
import { basicAuth, freePort } from '../helpers/oauth';
import { buildOnce, ROOT, runCli, startServerProcess, type RunningServer } from '../helpers/processes';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp';
import { createTestDatabase } from '../helpers/test-app';

/**
 * docs/operations.md "Several instances", for real: Debian's nginx runs deploy/nginx.conf (only the upstream
 * addresses, the listen port and the log paths swapped) in front of two server processes in production mode on one
 * PostgreSQL database and one Redis. Through nginx: a sign-in, an OAuth authorization-code flow, revocations seen
 * by both instances, and the per-IP rate limit counted once across them.
 */
const RATE_LIMIT_MAX = 60;
let tmp: string;
let nginx: ChildProcess | undefined;
let nginxLog = '';
let instances: RunningServer[] = [];
let smtp: TestSmtpServer;
let dropDb: (() => Promise<void>) | undefined;
let base: string;
let redisUrl: string;
/** Requests sent to /api/* through nginx (what the shared limiter counts). */
let apiRequests = 0;

const METRICS_TOKEN = 'two-instances-metrics-token';

async function via(pathAndQuery: string, init: RequestInit = {}): Promise<Response> {
  if (pathAndQuery.startsWith('/api/')) apiRequests++;
  return fetch(`${base}${pathAndQuery}`, { redirect: 'manual', ...init });
}
const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** deploy/nginx.conf with this machine's addresses, inside a minimal main configuration. */
function nginxConfig(ports: { listen: number; upstreams: number[] }): string {
  let site = fs.readFileSync(path.join(ROOT, 'deploy/nginx.conf'), 'utf8');
  const swap = (from: string, to: string) => {
    if (!site.includes(from)) throw new Error(`deploy/nginx.conf no longer contains "${from}": update this test`);
    site = site.replace(from, to);
  };
  swap('server sso1:3000', `server 127.0.0.1:${ports.upstreams[0]}`);
  swap('server sso2:3000', `server 127.0.0.1:${ports.upstreams[1]}`);
  swap('listen 80;', `listen 127.0.0.1:${ports.listen};`);
  swap('/var/log/nginx/access.log', path.join(tmp, 'access.log'));
  return `daemon off;
worker_processes 1;
pid ${tmp}/nginx.pid;
error_log ${tmp}/error.log warn;
events { worker_connections 256; }
http {
  client_body_temp_path ${tmp}/body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
${site}
}
`;
}

beforeAll(async () => {
  if (!fs.existsSync(NGINX_PATH)) throw new Error(`nginx not found at ${NGINX_PATH}: apt-get install -y nginx`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-nginx-'));
  fs.chmodSync(tmp, 0o777);
  smtp = await startSmtpServer();
  const database = await createTestDatabase();
  dropDb = database.drop;
  // A Redis database of its own, emptied first: the limiter's keys are per client address (127.0.0.1 here).
  redisUrl = `${(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379').replace(/\/\d*$/, '')}/${9 + (process.pid % 6)}`;
  const redis = createClient({ url: redisUrl });
  await redis.connect();
  await redis.flushDb();
  await redis.quit();

  const [listen, p1, p2] = [await freePort(), await freePort(), await freePort()];
  base = `http://127.0.0.1:${listen}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    BASE_URL: base,
    TRUST_PROXY: '1',
    JWT_ACCESS_SECRET: 'two-instances-access-secret-0123456789abcdefghij',
    JWT_REFRESH_SECRET: 'two-instances-refresh-secret-0123456789abcdefghij',
    KEYS_SECRET: 'two-instances-keys-secret-0123456789abcdefghijklmn',
    SMTP_URL: smtp.url,
    METRICS_TOKEN,
    COOKIE_SECURE: 'false',
    BCRYPT_ROUNDS: '4',
    RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
    RATE_LIMIT_WINDOW_MS: '600000',
    LOG_LEVEL: 'warn',
  };
  // The documented order: migrations as their own step, then the instances (and an admin made with the CLI,
  // which runs beside them on PostgreSQL).
  expect((await runCli('migrate', [], env)).code).toBe(0);
  expect((await runCli('admin', ['create-admin', '--email', 'ops@example.test', '--password', 'ops-password'], env)).code).toBe(0);
  // Production runs the bundled build (npm run build): so do these two instances.
  await buildOnce();
  instances = await Promise.all([
    startServerProcess(env, p1, undefined, { build: true }),
    startServerProcess(env, p2, undefined, { build: true }),
  ]);

  const conf = path.join(tmp, 'nginx.conf');
  fs.writeFileSync(conf, nginxConfig({ listen, upstreams: [p1, p2] }));
  nginx = spawn(NGINX_PATH, ['-c', conf, '-p', tmp, '-e', path.join(tmp, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
  nginx.stderr!.on('data', (d) => (nginxLog += d));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (nginx.exitCode !== null) throw new Error(`nginx exited: ${nginxLog} ${fs.readFileSync(path.join(tmp, 'error.log'), 'utf8')}`);
    try {
      if ((await fetch(`${base}/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`nginx did not answer: ${nginxLog}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 180_000);

afterAll(async () => {
  if (nginx && nginx.exitCode === null) {
    const exited = new Promise((r) => nginx!.once('exit', r));
    nginx.kill('SIGQUIT');
    await exited;
  }
  for (const instance of instances) expect(await instance.stop()).toBe(0);
  await smtp?.close();
  await dropDb?.();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** Requests each instance has served, from its own /metrics (scraped directly: nginx keeps /metrics closed). */
async function servedPerInstance(): Promise<number[]> {
  return Promise.all(
    instances.map(async (instance) => {
      const text = await (await fetch(`${instance.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      return text
        .split('\n')
        .filter((l) => l.startsWith('http_request_duration_seconds_count{'))
        .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    }),
  );
}

test('sign-in, OAuth code flow and revocations through nginx, served by both instances', async () => {
  expect((await via('/metrics')).status).toBe(404);

  // Register and sign in (the welcome mail goes out through SMTP from whichever instance served it).
  const email = `two-${randomBytes(4).toString('hex')}@example.test`;
  const reg = await via('/api/auth/register', json({ first_name: 'Two', last_name: 'Instances', email, password: 'two-password' }));
  expect(reg.status).toBe(201);
  expect(reg.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
  const login = await via('/api/auth/login', json({ email, password: 'two-password' }));
  expect(login.status).toBe(200);
  const { accessToken } = (await login.json()) as { accessToken: string };
  for (let i = 0; i < 4; i++) {
    const me = await via('/api/auth/me', { headers: { authorization: `Bearer ${accessToken}` } });
    expect(me.status).toBe(200);
  }

  // An admin registers an OAuth client.
  const admin = (await (await via('/api/auth/login', json({ email: 'ops@example.test', password: 'ops-password' }))).json()) as {
    accessToken: string;
  };
  const redirectUri = 'http://127.0.0.1:9/callback';
  const created = await via(
    '/api/admin/oauth-clients',
    json(
      { name: 'Behind nginx', redirect_uris: [redirectUri], scopes: ['openid', 'profile', 'email'] },
      { authorization: `Bearer ${admin.accessToken}` },
    ),
  );
  expect(created.status).toBe(201);
  const client = (await created.json()) as { client: { client_id: string }; client_secret: string };

  // Authorization code + PKCE, the user's browser session carried as its cookie.
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const authorize = await via(
    `/api/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: client.client.client_id,
      redirect_uri: redirectUri,
      scope: 'openid profile email',
      state: 'state-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })}`,
    { headers: { cookie: `accessToken=${accessToken}` } },
  );
  expect(authorize.status).toBe(302);
  const consent = new URL(authorize.headers.get('location')!, base);
  expect(consent.pathname).toBe('/consent');
  const approve = await via(
    '/api/oauth/authorize/approve',
    json({ request_id: consent.searchParams.get('request_id') }, { authorization: `Bearer ${accessToken}` }),
  );
  expect(approve.status).toBe(200);
  const redirect = new URL(((await approve.json()) as { redirect_url: string }).redirect_url);
  expect(redirect.searchParams.get('state')).toBe('state-1');
  const token = await via('/api/oauth/token', {
    method: 'POST',
    headers: {
      authorization: basicAuth(client.client.client_id, client.client_secret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: redirect.searchParams.get('code')!,
      code_verifier: verifier,
      redirect_uri: redirectUri,
    }),
  });
  expect(token.status).toBe(200);
  const exchanged = (await token.json()) as { access_token: string; refresh_token: string; id_token: string };
  expect(exchanged.id_token.split('.')).toHaveLength(3);
  // The one-statement refresh rotation with an openid grant: a new id_token for the same session, on either instance.
  const refreshed = await via('/api/oauth/token', {
    method: 'POST',
    headers: {
      authorization: basicAuth(client.client.client_id, client.client_secret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: exchanged.refresh_token }),
  });
  expect(refreshed.status).toBe(200);
  const tokens = (await refreshed.json()) as { access_token: string; refresh_token: string; id_token: string };
  const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
  expect(claimsOf(tokens.id_token)).toMatchObject({
    sid: claimsOf(exchanged.id_token).sid,
    auth_time: claimsOf(exchanged.id_token).auth_time,
    email,
  });
  for (let i = 0; i < 2; i++) {
    const info = await via('/api/oauth/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(info.status).toBe(200);
    expect(((await info.json()) as { email: string }).email).toBe(email);
  }

  // Revocation (RFC 7009) on one instance is seen by both: the token is dead wherever the next request lands.
  const revoke = await via('/api/oauth/revoke', {
    method: 'POST',
    headers: {
      authorization: basicAuth(client.client.client_id, client.client_secret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token: tokens.refresh_token }),
  });
  expect(revoke.status).toBe(200);
  for (let i = 0; i < 4; i++) {
    expect((await via('/api/oauth/userinfo', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  }

  // Sign-out likewise.
  expect((await via('/api/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(200);
  for (let i = 0; i < 4; i++) {
    expect((await via('/api/auth/me', { headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(401);
  }

  // Round robin: each instance served a good share of the traffic.
  const served = await servedPerInstance();
  expect(Math.min(...served)).toBeGreaterThanOrEqual(8);

  // The audit trail holds what both instances did, with the client address nginx passed on.
  const trail = await via(`/api/admin/audit-events?type=auth.login.succeeded,oauth.client.created&limit=10`, {
    headers: { authorization: `Bearer ${admin.accessToken}` },
  });
  expect(trail.status).toBe(200);
  const events = ((await trail.json()) as { events: Array<{ type: string; ip: string; request_id: string }> }).events;
  expect(events.map((e) => e.type).sort()).toEqual(['auth.login.succeeded', 'auth.login.succeeded', 'oauth.client.created']);
  for (const e of events) {
    expect(e.ip).toBe('127.0.0.1');
    expect(e.request_id).toMatch(/^[0-9a-f]{32}$/);
  }
  expect(smtp.mailsTo(email)).toHaveLength(1);
}, 60_000);

test('the per-IP rate limit is shared: the limit-th /api request overall is the last one let through', async () => {
  // Whatever the first test used counts already; spend the rest of the budget across both instances.
  const before = await servedPerInstance();
  let first429 = 0;
  while (apiRequests < RATE_LIMIT_MAX + 5) {
    const res = await via('/api/oauth/.well-known/oauth-authorization-server');
    if (res.status === 429) {
      first429 = apiRequests;
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await res.json()) as { error: string }).error).toBe('rate_limited');
      break;
    }
    expect(res.status).toBe(200);
  }
  // One shared counter: the (limit + 1)-th request is refused although each instance saw only about half of them.
  expect(first429).toBe(RATE_LIMIT_MAX + 1);
  const after = await servedPerInstance();
  expect(after[0]! - before[0]!).toBeGreaterThan(2);
  expect(after[1]! - before[1]!).toBeGreaterThan(2);
  expect((await via('/api/auth/me')).status).toBe(429);
  // /health stays outside the limit (load balancers probe it).
  expect((await via('/health')).status).toBe(200);
}, 60_000);
