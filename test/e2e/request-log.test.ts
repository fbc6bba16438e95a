import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { createTestApp, type TestApp } from '../helpers/test-app';

/** The access log: one JSON line per request with its id, method, path (never the query) and status. */
const lines: Array<Record<string, any>> = [];
let t: TestApp;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  t = await createTestApp({ logger: pino({ level: 'info', base: undefined }, sink) });
});
afterAll(() => t.close());

const accessLines = () => lines.filter((l) => l.msg === 'request completed' || l.msg === 'request aborted');

test('a request is logged once with its id, path without query, status and time; the query never reaches the log', async () => {
  const res = await request(t.app)
    .get('/api/auth/login-target?redirect_to=https%3A%2F%2Fportal.test%2Fx&code=secret-code-123')
    .set('X-Request-Id', 'trace-id-0001');
  const logged = accessLines().filter((l) => l.req?.id === 'trace-id-0001');
  expect(logged).toHaveLength(1);
  expect(logged[0]).toMatchObject({ level: 30, req: { method: 'GET', path: '/api/auth/login-target' }, res: { statusCode: res.status } });
  expect(typeof logged[0]!.responseTime).toBe('number');
  expect(JSON.stringify(lines)).not.toContain('secret-code-123');
});

test('a 401 is logged at info with a generated id, which the response carries', async () => {
  const res = await request(t.app).get('/api/auth/me').set('Authorization', 'Bearer not-a-token');
  expect(res.status).toBe(401);
  const id = res.headers['x-request-id'];
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  expect(accessLines().find((l) => l.req?.id === id)).toMatchObject({ level: 30, res: { statusCode: 401 } });
  expect(JSON.stringify(lines)).not.toContain('not-a-token');
});

test('GET /health, polled by load balancers, is not logged', async () => {
  const res = await request(t.app).get('/health');
  expect(res.status).toBe(200);
  expect(accessLines().find((l) => l.req?.id === res.headers['x-request-id'])).toBeUndefined();
});
