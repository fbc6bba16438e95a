import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 30 (info): `/admin/audit.csv?actor=%00` answered 200 and then reset the connection (PostgreSQL refuses a NUL
 * byte in text). Every audit filter is checked before anything is sent: a clear 400, on the CSV export, the console
 * page and the JSON API alike.
 */
let t: TestApp;
let admin: Awaited<ReturnType<typeof makeSignedInUser>>;
beforeAll(async () => {
  t = await createTestApp();
  admin = await makeSignedInUser(t, ['super_admin']);
});
afterAll(async () => {
  await t.close();
});

const BAD = ['actor=%00', 'subject=%00', 'actor=a%00b', 'subject=%01x', 'actor=%7F'];

test.each(BAD)('GET /admin/audit.csv?%s: 400 before any CSV, with a message', async (query) => {
  const res = await admin.agent.get(`/admin/audit.csv?${query}`);
  expect([res.status, res.status === 400 ? '' : res.text.slice(0, 2000)]).toEqual([400, '']);
  expect(res.headers['content-type']).not.toMatch(/text\/csv/);
  expect(res.text).toMatch(/control characters/);
});

test.each(BAD)('GET /admin/audit?%s: the page answers 400 naming the field', async (query) => {
  const res = await admin.agent.get(`/admin/audit?${query}`);
  expect(res.status).toBe(400);
  expect(res.text).toMatch(/control characters/);
});

test.each(BAD)('GET /api/admin/audit-events?%s: 400 validation_error', async (query) => {
  const res = await request(t.app).get(`/api/admin/audit-events?${query}`).set('Authorization', admin.bearer);
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({
    error: 'validation_error',
    details: [{ path: query.split('=')[0], message: expect.stringMatching(/control characters/) }],
  });
});

test('an ordinary id still filters (any string: user, role and client ids alike)', async () => {
  const res = await request(t.app)
    .get(`/api/admin/audit-events?actor=${admin.user.id}&subject=client_abc`)
    .set('Authorization', admin.bearer);
  expect(res.status).toBe(200);
  const csv = await admin.agent.get(`/admin/audit.csv?actor=${admin.user.id}`);
  expect(csv.status).toBe(200);
  expect(csv.headers['content-type']).toMatch(/text\/csv/);
});
