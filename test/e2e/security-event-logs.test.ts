import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { makeClient, makeSignedInUser, makeUser } from '../helpers/factories';
import { issueOAuthTokens } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/** Every security event is logged once, as JSON, with request id, user id and client id, and never a secret. */
let t: TestApp;
const lines: Array<Record<string, unknown>> = [];
let raw = '';

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      raw += chunk.toString();
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  t = await createTestApp({ logger: pino({ level: 'info', base: undefined }, sink) });
});
afterAll(async () => {
  await t.close();
});

type Logged = {
  msg: string;
  event: {
    type: string;
    actorId: string | null;
    subjectId: string | null;
    clientId: string | null;
    requestId: string | null;
    ip: string | null;
  };
};
const eventLines = (type: string) => lines.filter((l) => l.msg === `security event ${type}`) as unknown as Logged[];

test('a sign-in and an OAuth code exchange are each logged once with request id, user and client', async () => {
  const user = await makeUser(t);
  const res = await request(t.app)
    .post('/api/auth/login')
    .set('X-Request-Id', 'log-test-request-1')
    .send({ email: user.email, password: user.password });
  expect(res.status).toBe(200);
  const signIns = eventLines('auth.login.succeeded');
  expect(signIns).toHaveLength(1);
  expect(signIns[0]!.event).toMatchObject({ actorId: user.id, subjectId: user.id, requestId: 'log-test-request-1', clientId: null });

  const { agent } = await makeSignedInUser(t);
  const client = await makeClient(t);
  const tokens = await issueOAuthTokens(t, agent, client);
  const issued = eventLines('oauth.token.issued');
  expect(issued).toHaveLength(1);
  expect(issued[0]!.event.clientId).toBe(client.clientId);
  expect(issued[0]!.event.requestId).toMatch(/^[0-9a-f-]{36}$/);

  await request(t.app).post('/api/auth/login').send({ email: user.email, password: 'a-wrong-password' });
  expect(eventLines('auth.login.failed')).toHaveLength(1);

  for (const secret of [
    user.password,
    'a-wrong-password',
    res.body.accessToken,
    res.body.refreshToken,
    tokens.access_token,
    tokens.refresh_token,
    client.clientSecret,
  ]) {
    expect(raw).not.toContain(secret);
  }
});

test('a detail key that looks like a secret never reaches a sink', async () => {
  await t.ctx.events.record(t.db, {
    type: 'user.changed',
    actorId: null,
    subjectId: 'x',
    detail: { fields: ['name'], password: 'leak-1', new_token: 'leak-2', code: 'leak-3' },
  });
  await t.ctx.events.idle?.();
  expect(eventLines('user.changed').at(-1)!.event).toMatchObject({ subjectId: 'x' });
  expect(raw).not.toMatch(/leak-[123]/);
  const row = await t.db('audit_events').where({ subject_id: 'x' }).first();
  expect(row.detail).toEqual({ fields: ['name'] });
});
