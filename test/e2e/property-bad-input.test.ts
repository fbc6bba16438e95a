import fc from 'fast-check';
import request from 'supertest';
import type { Server } from 'node:http';
import { listDeclaredRoutes, type DeclaredAppRoute } from '../../src/routes/route-table';
import { makeSignedInUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §2/§8, property-based: every documented operation (the app's own route declarations, so a new route is
 * covered the day it lands), called with generated path parameters (broken percent-escapes included), query
 * strings, bodies and headers, answers below 500, in the contract's error shape when it refuses, never with a
 * stack trace or SQL text, and a refused request leaves the database as it was.
 *
 * CI runs a fixed seed; `PROPERTY_RUNS=5000 PROPERTY_SEED=<n> npx jest test/e2e/property-bad-input.test.ts` runs
 * a larger (or another) sample on demand.
 */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);
const SEED = Number(process.env.PROPERTY_SEED ?? 20261122);

let t: TestApp;
let server: Server;
let routes: DeclaredAppRoute[];
let bearer: string;
beforeAll(async () => {
  t = await createTestApp();
  server = t.app.listen(0, '127.0.0.1');
  routes = listDeclaredRoutes(t.app);
  bearer = (await makeSignedInUser(t, ['manager'])).bearer;
});
afterAll(async () => {
  server.close();
  await t.close();
});

/** Row counts of every table a request could write: a refused request must leave all of them as they were. */
async function databaseDigest(): Promise<string> {
  const result = await t.db.raw(
    `select (select count(*) from users) u, (select count(*) from sessions where revoked_at is null) s,
            (select count(*) from refresh_tokens where used_at is null) rt, (select count(*) from oauth_clients) c,
            (select count(*) from roles) r, (select count(*) from user_roles) ur, (select count(*) from oauth_grants) g,
            (select count(*) from oauth_codes where used_at is null) oc, (select count(*) from email_tokens where used_at is null) et,
            (select count(*) from login_tokens where used_at is null) lt, (select count(*) from oauth_authorization_requests where consumed_at is null) ar,
            (select max(updated_at) from users) uu, (select max(updated_at) from oauth_clients) cu, (select max(updated_at) from roles) ru`,
  );
  return JSON.stringify(result.rows[0]);
}

const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    '%',
    '%E0%A4%A',
    '%C0%AF',
    '%ZZ',
    '%00',
    '..%2F..',
    '%%',
    '\u0000',
    '😀',
    '-1',
    '1e999',
    'null',
    '__proto__',
    'constructor',
  ),
  fc.uuid(),
  fc.integer().map(String),
);
const jsonValue = fc.oneof(
  nasty,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(nasty, { maxLength: 3 }),
  fc.dictionary(nasty, nasty, { maxKeys: 3 }),
);
const fieldNames = fc.constantFrom(
  'email',
  'password',
  'first_name',
  'last_name',
  'token',
  'refreshToken',
  'role_id',
  'role',
  'name',
  'scopes',
  'redirect_uri',
  'redirect_uris',
  'is_active',
  'permissions',
  'grant_type',
  'code',
  'client_id',
  'request_id',
  'login_token',
  'app',
  'path',
  'redirect_to',
  'page',
  'limit',
  'search',
  'current_password',
  'new_password',
  '__proto__',
  'constructor',
);
const bodyArb = fc.oneof(
  fc.dictionary(fieldNames, jsonValue, { maxKeys: 6 }).map((b) => ({ kind: 'json' as const, b })),
  fc.string({ maxLength: 60 }).map((b) => ({ kind: 'raw' as const, b })),
  fc.dictionary(fieldNames, fc.string({ maxLength: 20 }), { maxKeys: 5 }).map((b) => ({ kind: 'form' as const, b })),
);

function fillPath(path: string, values: string[]): string {
  let i = 0;
  // A raw value goes into the URL as is (so a broken percent-escape reaches the router); slashes are escaped so
  // that the value stays one segment.
  return path.replace(
    /:([A-Za-z_]+)/g,
    () => (values[i++ % values.length] ?? 'x').replace(/[/?#\s]/g, (c) => encodeURIComponent(c)) || 'x',
  );
}

test(`every documented operation answers bad input with a 4xx in the contract's shape (seed ${SEED}, ${RUNS} runs)`, async () => {
  expect(routes.length).toBeGreaterThan(40);
  await fc.assert(
    fc.asyncProperty(
      fc.nat({ max: 10_000 }),
      fc.array(nasty, { minLength: 1, maxLength: 3 }),
      fc.dictionary(fieldNames, nasty, { maxKeys: 4 }),
      bodyArb,
      fc.boolean(),
      fc.constantFrom(undefined, 'application/json', 'text/plain', 'application/x-www-form-urlencoded; charset=latin9'),
      async (index, params, query, body, withBearer, contentType) => {
        const route = routes[index % routes.length]!;
        const path = fillPath(route.path, params);
        const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
        const before = await databaseDigest();
        let req = (request(server) as unknown as Record<string, (p: string) => request.Test>)[route.method]!(qs ? `${path}?${qs}` : path);
        if (withBearer) req = req.set('Authorization', bearer);
        if (route.method !== 'get' && route.method !== 'delete') {
          if (body.kind === 'json') req = req.send(body.b);
          else if (body.kind === 'form') req = req.type('form').send(body.b);
          else req = req.set('Content-Type', contentType ?? 'application/json').send(body.b);
        }
        const res = await req;
        // An image (GET /favicon.ico) has no text body in supertest.
        res.text ??= '';
        const where = `${route.method.toUpperCase()} ${path}?${qs} -> ${res.status} ${res.text.slice(0, 200)}`;
        if (res.status >= 500) throw new Error(`5xx: ${where}`);
        if (/\bat [\w.<>]+ \(|node_modules|\bselect\b.+\bfrom\b|syntax error at|violates .* constraint/i.test(res.text)) {
          throw new Error(`stack or SQL text: ${where}`);
        }
        if (res.status >= 400 && (res.headers['content-type'] ?? '').startsWith('application/json')) {
          const b = res.body as Record<string, unknown>;
          const contractShape = typeof b.error === 'string' && (typeof b.message === 'string' || typeof b.error_description === 'string');
          if (!contractShape) throw new Error(`error outside the contract's shape: ${where}`);
        }
        if (res.status >= 400 && res.status !== 429 && (await databaseDigest()) !== before) {
          throw new Error(`a refused request changed the database: ${where}`);
        }
      },
    ),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  );
}, 300_000);
