import request from 'supertest';
import { makeClient, makeSignedInUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Bad input always gets a clear 4xx in the contract's shape, never a 500 (DEVELOPERS.md): every operation of the
 * OpenAPI description is sent a set of hostile bodies, queries and path values by a super_admin (so that the
 * permission checks do not stop the request before its input is read).
 */
let t: TestApp;
let bearer: string;
let client: { clientId: string; clientSecret: string };
let operations: Array<{ method: string; path: string }>;

beforeAll(async () => {
  t = await createTestApp();
  ({ bearer } = await makeSignedInUser(t, ['super_admin']));
  client = await makeClient(t);
  const doc = (await request(t.app).get('/api/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  operations = Object.entries(doc.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ method, path })))
    // Signing out would turn every later request into a 401 before its input is read.
    .filter((o) => o.path !== '/api/auth/logout');
});
afterAll(async () => {
  await t.close();
});

const HOSTILE_BODIES: unknown[] = [
  null,
  [],
  'a string',
  42,
  {},
  { email: ['a@b.test'], password: { $gt: '' }, token: 123, name: null },
  { first_name: {}, last_name: [], email: 'x'.repeat(5000), password: '\u0000\u0000\u0000\u0000\u0000\u0000' },
  { role_id: 'not-a-uuid', role: 42, application: {}, permission: [], permissions: 'users:read' },
  { redirect_uri: 'javascript:alert(1)', redirect_uris: 'https://x.test/cb', scopes: { a: 1 }, is_active: 'yes' },
  { request_id: "1' or '1'='1", grant_type: ['authorization_code'], code: {}, refresh_token: 1 },
  { login_token: null, app: ['portal'], redirect_to: { href: 'https://evil.test' }, path: 7 },
  { current_password: 1, new_password: 'ok', search: {}, page: -1, limit: 1e9 },
  { first_name: 'nul\u0000byte', last_name: 'x', email: 'nul-byte@example.test', password: 'secret1', name: 'a\u0000b' },
  JSON.parse('{"__proto__": {"isAdmin": true}, "constructor": {"prototype": {"x": 1}}}'),
];

const HOSTILE_PATH_VALUES = [
  'not-a-uuid',
  '00000000-0000-4000-8000-000000000000',
  '%00',
  "1'%20or%201=1",
  'x'.repeat(300),
  '..%2F..%2Fetc',
];

function concrete(path: string, value: string): string {
  return path.replace(/\{(\w+)\}/g, value);
}

function send(method: string, path: string, body?: unknown) {
  const req = (request(t.app) as unknown as Record<string, (p: string) => request.Test>)[method]!(path).set('Authorization', bearer);
  if (body === undefined || method === 'get' || method === 'delete') return req;
  return req.set('Content-Type', 'application/json').send(JSON.stringify(body));
}

test('no hostile JSON body gets a 5xx from any operation', async () => {
  const failures: string[] = [];
  for (const { method, path } of operations) {
    for (const body of HOSTILE_BODIES) {
      const res = await send(method, concrete(path, '00000000-0000-4000-8000-000000000000'), body);
      if (res.status >= 500) failures.push(`${method.toUpperCase()} ${path} ${JSON.stringify(body)} -> ${res.status}`);
      else if (res.status >= 400 && res.type === 'application/json') {
        const shapeOk =
          typeof res.body.error === 'string' && (typeof res.body.message === 'string' || typeof res.body.error_description === 'string');
        if (!shapeOk) failures.push(`${method.toUpperCase()} ${path} -> ${res.status} with body ${JSON.stringify(res.body)}`);
      }
    }
  }
  expect(failures).toEqual([]);
}, 120_000);

test('no hostile path value gets a 5xx', async () => {
  const failures: string[] = [];
  for (const { method, path } of operations.filter((o) => o.path.includes('{'))) {
    for (const value of HOSTILE_PATH_VALUES) {
      const res = await send(method, concrete(path, value), {});
      if (res.status >= 500) failures.push(`${method.toUpperCase()} ${concrete(path, value)} -> ${res.status}`);
    }
  }
  expect(failures).toEqual([]);
}, 60_000);

test('no hostile query string gets a 5xx', async () => {
  const queries = [
    'search[$ne]=x&page=abc&limit=-5',
    'page=1&page=2&limit=10&limit=20',
    'app=portal&app=admin&redirect_to=https://evil.test&path=//x',
    'request_id[]=1',
    'response_type=code&client_id[]=x&redirect_uri=%ZZ&scope=%00&state=' + 'x'.repeat(3000),
    `response_type=code&client_id=${client.clientId}&redirect_uri=https://app.test/callback&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256&scope[]=openid`,
  ];
  const failures: string[] = [];
  for (const { path } of operations.filter((o) => o.method === 'get')) {
    for (const q of queries) {
      const res = await send('get', `${concrete(path, '00000000-0000-4000-8000-000000000000')}?${q}`);
      if (res.status >= 500) failures.push(`GET ${path}?${q} -> ${res.status}`);
    }
  }
  expect(failures).toEqual([]);
}, 60_000);

test('form-encoded OAuth requests with repeated or odd parameters are 4xx', async () => {
  const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
  const bodies = [
    'grant_type=authorization_code&grant_type=refresh_token',
    'grant_type=authorization_code&code[]=x&redirect_uri=y&code_verifier=z',
    'grant_type=refresh_token&refresh_token=' + 'a'.repeat(10000),
    '%%%=%%%',
    'token[x]=1',
  ];
  for (const path of ['/api/oauth/token', '/api/oauth/revoke']) {
    for (const body of bodies) {
      const res = await request(t.app).post(path).set('Authorization', basic).type('form').send(body);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(typeof res.body.error).toBe('string');
    }
  }
});

test('stored data is unchanged by the hostile requests: the signed-in admin still works', async () => {
  const me = await request(t.app).get('/api/auth/me').set('Authorization', bearer);
  expect(me.status).toBe(200);
  expect(me.body.user.roles).toContain('super_admin');
});
