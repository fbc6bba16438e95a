import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { makeUserWithPermissions } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Security review (docs/security.md, "Fifth review"): the user import reads bodies of up to 16 MB (the API's other
 * routes 100 kB). Parsing 16 MB of JSON blocks the event loop for about a second, so that parser must run only for a
 * caller the route's guard lets in, never for an anonymous request (nor for one the rate limit has not counted yet).
 * Watched by counting the JSON.parse calls that receive the big body.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const big = `[${'1,'.repeat(150_000)}1]`; // 300 kB of JSON
const post = () => request(t.app).post('/api/admin/users/import').set('Content-Type', 'application/json').send(big);

/** How many times JSON.parse was given the big body while `run` ran. */
async function bigParses(run: () => Promise<unknown>): Promise<number> {
  const parse = jest.spyOn(JSON, 'parse');
  try {
    await run();
    return parse.mock.calls.filter(([text]) => typeof text === 'string' && text.length >= big.length).length;
  } finally {
    parse.mockRestore();
  }
}

test('anonymous: 401, and the big body is never parsed', async () => {
  let status = 0;
  expect(await bigParses(async () => (status = (await post()).status))).toBe(0);
  expect(status).toBe(401);
});

test('signed in without users:write: 403, and the big body is never parsed', async () => {
  const reader = await makeUserWithPermissions(t, ['users:read']);
  let status = 0;
  expect(await bigParses(async () => (status = (await post().set('Authorization', reader.bearer)).status))).toBe(0);
  expect(status).toBe(403);
});

test('a caller allowed to import still gets the big body read', async () => {
  const admin = await makeSignedInUser(t, ['super_admin']);
  let status = 0;
  expect(await bigParses(async () => (status = (await post().set('Authorization', admin.bearer)).status))).toBe(1);
  expect(status).toBe(400); // 150,001 rows: more than 10,000
  const ok = await request(t.app)
    .post('/api/admin/users/import?dry_run=true')
    .set('Authorization', admin.bearer)
    .send([{ email: 'review-import@example.test', first_name: 'A', last_name: 'B' }]);
  expect(ok.status).toBe(200);
});
