import request from 'supertest';
import { createLogger } from '../../src/lib/logger';
import { createMailer } from '../../src/services/mailer.service';
import { makeClient, makeSignedInUser, makeUser, uniqueEmail } from '../helpers/factories';
import { basicAuth, exchangeCode, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * GET /metrics carries what an operator alerts on (docs/operations.md "Metrics"), each driven here by the real
 * thing: sign-ins by outcome, lockouts, 429s, tokens by grant type, refresh-token reuse, code replays, failed
 * mails, the database pool, event-loop lag and build info.
 */
const METRICS_TOKEN = 'metrics-token-0123456789';
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { METRICS_TOKEN } });
});
afterAll(async () => {
  await t.close();
});

async function scrape(): Promise<string> {
  const res = await request(t.app).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`);
  expect(res.status).toBe(200);
  return res.text;
}

/** The value of one sample, e.g. value(text, 'sso_sign_ins_total{outcome="success"}'). */
function value(text: string, sample: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  if (!line)
    throw new Error(
      `no sample ${sample} in:\n${text
        .split('\n')
        .filter((l) => l.startsWith('sso_'))
        .join('\n')}`,
    );
  return Number(line.slice(sample.length + 1));
}

test('before any traffic every documented series exists (alerts see 0, not "no data")', async () => {
  const text = await scrape();
  for (const outcome of ['success', 'bad_password', 'throttled', 'mfa_required']) {
    expect(value(text, `sso_sign_ins_total{outcome="${outcome}"}`)).toBe(0);
  }
  for (const name of [
    'sso_login_lockouts_total',
    'sso_rate_limited_total',
    'sso_refresh_token_reuse_total',
    'sso_authorization_code_replays_total',
    'sso_email_send_failures_total',
  ]) {
    expect(value(text, name)).toBe(0);
  }
  expect(value(text, 'sso_tokens_issued_total{grant_type="authorization_code"}')).toBe(0);
  expect(value(text, 'sso_db_pool_in_use')).toBeGreaterThanOrEqual(0);
  // The test app's pool of 20 and the statement pool's half of it.
  expect(value(text, 'sso_db_pool_max')).toBe(30);
  expect(value(text, 'sso_db_pool_waiting')).toBe(0);
  expect(value(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
  expect(text).toMatch(/^sso_build_info\{version="0\.1\.0",node_version="v\d+\.\d+\.\d+"\} 1$/m);
});

test('sign-ins by outcome, the lockout and the 429s it causes', async () => {
  const user = await makeUser(t);
  expect((await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password })).status).toBe(200);
  for (let i = 0; i < 10; i++) {
    expect(
      (
        await request(t.app)
          .post('/api/auth/login')
          .send({ email: user.email, password: `wrong-${i}-x` })
      ).status,
    ).toBe(401);
  }
  const locked = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password });
  expect(locked.status).toBe(429);
  const text = await scrape();
  expect(value(text, 'sso_sign_ins_total{outcome="success"}')).toBe(1);
  expect(value(text, 'sso_sign_ins_total{outcome="bad_password"}')).toBe(10);
  expect(value(text, 'sso_sign_ins_total{outcome="throttled"}')).toBe(1);
  expect(value(text, 'sso_login_lockouts_total')).toBe(1);
  expect(value(text, 'sso_rate_limited_total')).toBe(1);
  expect(value(text, 'sso_tokens_issued_total{grant_type="password"}')).toBe(1);
});

test('tokens by grant type, authorization-code replay and refresh-token reuse', async () => {
  const before = await scrape();
  const { agent } = await makeSignedInUser(t);
  const client = await makeClient(t);
  const { code, verifier } = await obtainCode(agent, client);
  const first = await exchangeCode(t, client, { code, verifier });
  expect(first.status).toBe(200);
  expect((await exchangeCode(t, client, { code, verifier })).status).toBe(400);

  const { agent: agent2 } = await makeSignedInUser(t);
  const second = await obtainCode(agent2, client);
  const tokens = (await exchangeCode(t, client, { code: second.code, verifier: second.verifier })).body as { refresh_token: string };
  const refresh = () =>
    request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
  expect((await refresh()).status).toBe(200);
  t.clock.advance(3600);
  expect((await refresh()).status).toBe(400);

  const reg = await request(t.app)
    .post('/api/auth/register')
    .send({ first_name: 'M', last_name: 'X', email: uniqueEmail(), password: 'register-pass' });
  expect(reg.status).toBe(201);

  const after = await scrape();
  const delta = (sample: string) => value(after, sample) - value(before, sample);
  expect(delta('sso_tokens_issued_total{grant_type="authorization_code"}')).toBe(2);
  expect(delta('sso_tokens_issued_total{grant_type="refresh_token"}')).toBe(1);
  expect(delta('sso_tokens_issued_total{grant_type="registration"}')).toBe(1);
  expect(delta('sso_authorization_code_replays_total')).toBe(1);
  expect(delta('sso_refresh_token_reuse_total')).toBe(1);
  expect(value(after, 'sso_security_events_total{type="oauth.code.replayed"}')).toBe(1);
});

test('a mail the SMTP server does not take is counted', async () => {
  // Nothing listens on port 9 of 127.0.0.1: the connection is refused.
  const mailer = createMailer({
    transport: () => ({ smtpUrl: 'smtp://127.0.0.1:9', from: 'sso@example.test' }),
    logger: createLogger('silent'),
    recordFailure: (e) => t.ctx.events.record(t.db, e),
  });
  mailer.send({ to: 'someone@example.test', subject: 'Hello', text: 'secret link https://x/set-password?token=abc' });
  await mailer.close();
  expect(value(await scrape(), 'sso_email_send_failures_total')).toBe(1);
  await t.ctx.events.idle?.();
  const row = await t.db('audit_events').where({ type: 'mail.send_failed' }).first();
  expect(row.detail).toEqual({ subject: 'Hello', to_domain: 'example.test' });
});

test('DATABASE_POOL_MAX sizes the pools: the gauge says how many connections an instance may open', async () => {
  const small = await createTestApp({ env: { METRICS_TOKEN, DATABASE_POOL_MAX: '3' } });
  try {
    const res = await request(small.app).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`);
    expect(res.status).toBe(200);
    // 3 for queries, and 2 (half, rounded up) for the hot prepared statements.
    expect(value(res.text, 'sso_db_pool_max')).toBe(5);
    // The instance serves with it: a signed-in user's requests go through both pools.
    const user = await makeSignedInUser(small);
    const me = await request(small.app).get('/api/auth/me').set('Authorization', `Bearer ${user.accessToken}`);
    expect(me.status).toBe(200);
  } finally {
    await small.close();
  }
});
