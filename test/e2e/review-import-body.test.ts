import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { makeUserWithPermissions } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Security review (docs/security.md, "Fifth review"): the user import reads bodies of up to 16 MB (the API's other
 * routes 100 kB). Parsing 16 MB of JSON blocks the event loop for about a second, so that parser must run only for a
 * caller the route's guard lets in, never for an anonymous request (nor for one the rate limit has not counted yet).
 * A malformed body shows which came first: a 400 means the body was parsed before the caller was checked.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const big = `[${'1,'.repeat(150_000)}` + 'x'; // 300 kB, malformed
const post = () => request(t.app).post('/api/admin/users/import').set('Content-Type', 'application/json').send(big);

test('anonymous: 401 before the body is read', async () => {
  const res = await post();
  expect(res.status).toBe(401);
});

test('signed in without users:write: 403 before the body is read', async () => {
  const reader = await makeUserWithPermissions(t, ['users:read']);
  const res = await post().set('Authorization', reader.bearer);
  expect(res.status).toBe(403);
});

test('a caller allowed to import still gets the big body parsed (a malformed one is a 400)', async () => {
  const admin = await makeSignedInUser(t, ['super_admin']);
  const res = await post().set('Authorization', admin.bearer);
  expect(res.status).toBe(400);
  const ok = await request(t.app)
    .post('/api/admin/users/import?dry_run=true')
    .set('Authorization', admin.bearer)
    .send([{ email: 'review-import@example.test', first_name: 'A', last_name: 'B' }]);
  expect(ok.status).toBe(200);
});
