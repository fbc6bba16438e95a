import request from 'supertest';
import { makeClient, makeSignedInUser, signIn } from '../helpers/factories';
import { basicAuth, csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 33: a handler gets the request's service context (`ctx` in its input) and hands it to the services it calls;
 * the security events they record are completed from it (request id, IP, user agent, the caller), without an
 * AsyncLocalStorage store. One request of each face whose handlers reach their services through a helper of their
 * router (the OAuth client authentication, a hosted page's form action, a console action built from its endpoint):
 * each event row names the request that caused it.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { TRUST_PROXY: '1' } });
});
afterAll(async () => {
  await t.close();
});

interface Row {
  type: string;
  actor_id: string | null;
  client_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
}

async function rowsOf(requestId: string): Promise<Row[]> {
  await t.ctx.events.idle();
  return t.db('audit_events').where({ request_id: requestId }).select('type', 'actor_id', 'client_id', 'ip', 'user_agent', 'request_id');
}

test('OAuth: a refused client secret is recorded with the token request’s id, IP and user agent', async () => {
  const client = await makeClient(t);
  const res = await request(t.app)
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(client.clientId, 'not-the-secret'))
    .set('X-Request-Id', 'origin-oauth-0001')
    .set('X-Forwarded-For', '198.51.100.21')
    .set('User-Agent', 'OriginTest/oauth')
    .type('form')
    .send({ grant_type: 'client_credentials' });
  expect(res.status).toBe(401);
  expect(res.body.error).toBe('invalid_client');
  expect(await rowsOf('origin-oauth-0001')).toEqual([
    {
      type: 'oauth.client.auth_failed',
      actor_id: null,
      client_id: client.clientId,
      ip: '198.51.100.21',
      user_agent: 'OriginTest/oauth',
      request_id: 'origin-oauth-0001',
    },
  ]);
});

test('a hosted page’s form post: the signed-in person is the actor of the event, with the request’s origin', async () => {
  const { agent, user } = await makeSignedInUser(t);
  await signIn(t, user);
  const csrf = await csrfFrom(agent, '/account');
  const res = await agent
    .post('/account/sessions/revoke-others')
    .set('X-Request-Id', 'origin-page-0001')
    .set('X-Forwarded-For', '198.51.100.22')
    .set('User-Agent', 'OriginTest/page')
    .type('form')
    .send({ csrf });
  expect(res.status).toBe(303);
  expect(await rowsOf('origin-page-0001')).toEqual([
    {
      type: 'auth.session.revoked',
      actor_id: user.id,
      client_id: null,
      ip: '198.51.100.22',
      user_agent: 'OriginTest/page',
      request_id: 'origin-page-0001',
    },
  ]);
});

test('a console action: the administrator is the actor of the event, with the request’s origin', async () => {
  const { agent, user } = await makeSignedInUser(t, ['super_admin']);
  const csrf = await csrfFrom(agent, '/admin/roles/new');
  const name = `origin-${Date.now()}`;
  const res = await agent
    .post('/admin/roles')
    .set('X-Request-Id', 'origin-console-0001')
    .set('X-Forwarded-For', '198.51.100.23')
    .set('User-Agent', 'OriginTest/console')
    .type('form')
    .send({ csrf, name, description: 'Made by the origin test', application: '', permissions: [] });
  expect(res.status).toBe(303);
  expect(await t.db('roles').where({ name }).first()).toBeDefined();
  expect(await rowsOf('origin-console-0001')).toEqual([
    {
      type: 'role.created',
      actor_id: user.id,
      client_id: null,
      ip: '198.51.100.23',
      user_agent: 'OriginTest/console',
      request_id: 'origin-console-0001',
    },
  ]);
});

test('a mail the SMTP server refuses after the answer: its mail.send_failed row names the request that sent it', async () => {
  // Nothing listens on port 9 of 127.0.0.1: the connection is refused, after the registration was answered.
  const smtp = await createTestApp({ mailer: 'smtp', env: { TRUST_PROXY: '1', SMTP_URL: 'smtp://127.0.0.1:9' } });
  try {
    const res = await request(smtp.app)
      .post('/api/auth/register')
      .set('X-Request-Id', 'origin-mail-0001')
      .set('X-Forwarded-For', '198.51.100.24')
      .set('User-Agent', 'OriginTest/mail')
      .send({ first_name: 'M', last_name: 'X', email: 'origin-mail@example.test', password: 'register-pass' });
    expect(res.status).toBe(201);
    await smtp.ctx.mailer.idle();
    await smtp.ctx.events.idle();
    const row = await smtp.db('audit_events').where({ type: 'mail.send_failed' }).first();
    expect(row).toMatchObject({ ip: '198.51.100.24', user_agent: 'OriginTest/mail', request_id: 'origin-mail-0001' });
  } finally {
    await smtp.close();
  }
});

test('outside a request (a service called with the process’s context) an event has no origin', async () => {
  await t.ctx.events.record(t.ctx.db, { type: 'role.created', subjectId: null, detail: { name: 'from-a-job' } });
  await t.ctx.events.idle();
  const row = await t.db('audit_events').whereRaw(`detail->>'name' = 'from-a-job'`).first();
  expect(row).toMatchObject({ actor_id: null, client_id: null, ip: null, user_agent: null, request_id: null });
});
