import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Security review (docs/security.md, "Sixth review"): however a guarded route's path is spelled (case, a trailing
 * slash, percent-encoded letters) and whatever the method (HEAD answers through GET), the route's own guard runs or
 * nothing matches: never a 2xx for a caller the guard refuses. Holds for Express's matching and for any router that
 * replaces it.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const SPELLINGS = [
  '/api/admin/signing-keys',
  '/API/ADMIN/SIGNING-KEYS',
  '/api/admin/signing-keys/',
  '/api/%61dmin/signing-keys',
  '/api/admin/signing%2Dkeys',
  '/api/admin/./signing-keys',
];

test.each(SPELLINGS)('GET and HEAD %s: anonymous callers are refused', async (path) => {
  for (const method of ['get', 'head'] as const) {
    const res = await request(t.app)[method](path);
    expect([path, method, [401, 404]]).toEqual([path, method, expect.arrayContaining([res.status])]);
  }
});

test.each(SPELLINGS)('POST %s/rotate: an admin (not super_admin) is refused', async (path) => {
  const admin = await makeSignedInUser(t, ['admin']);
  const before = await t.db('oidc_signing_keys').count<{ count: string }[]>('* as count');
  const res = await admin.agent.post(`${path.replace(/\/$/, '')}/rotate`).set('Origin', t.ctx.config.baseUrl);
  expect([path, [403, 404]]).toEqual([path, expect.arrayContaining([res.status])]);
  expect(await t.db('oidc_signing_keys').count<{ count: string }[]>('* as count')).toEqual(before);
});
