import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { addSeconds } from '../../src/lib/clock';
import { randomToken, sha256Hex } from '../../src/lib/crypto';
import { pruneExpired, startPruneTimer } from '../../src/services/prune.service';
import { makeClient, makeUser } from '../helpers/factories';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const DAY = 24 * 3600;

async function insertSession(userId: string, o: { expiresIn: number; revokedAgo?: number }): Promise<string> {
  const id = randomUUID();
  const now = t.clock.now();
  await t.db('sessions').insert({
    id,
    user_id: userId,
    created_at: addSeconds(now, -DAY * 10),
    last_used_at: now,
    expires_at: addSeconds(now, o.expiresIn),
    revoked_at: o.revokedAgo === undefined ? null : addSeconds(now, -o.revokedAgo),
  });
  return id;
}

async function insertRefreshToken(sessionId: string, expiresIn: number): Promise<string> {
  const id = randomUUID();
  await t
    .db('refresh_tokens')
    .insert({ id, session_id: sessionId, created_at: t.clock.now(), expires_at: addSeconds(t.clock.now(), expiresIn) });
  return id;
}

async function insertLoginToken(expiresIn: number): Promise<string> {
  const hash = sha256Hex(randomToken());
  await t
    .db('login_tokens')
    .insert({ token_hash: hash, url: 'https://portal.test/', created_at: t.clock.now(), expires_at: addSeconds(t.clock.now(), expiresIn) });
  return hash;
}

const ids = async (table: string, key: string) => (await t.db(table).select(key)).map((r: Record<string, string>) => r[key]).sort();

describe('pruneExpired', () => {
  test('deletes expired and long-revoked rows of every table and keeps live ones', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const now = t.clock.now();

    const live = await insertSession(user.id, { expiresIn: DAY });
    const recentlyRevoked = await insertSession(user.id, { expiresIn: DAY, revokedAgo: DAY });
    const longRevoked = await insertSession(user.id, { expiresIn: DAY, revokedAgo: 8 * DAY });
    const expired = await insertSession(user.id, { expiresIn: -1 });
    const liveRt = await insertRefreshToken(live, DAY);
    await insertRefreshToken(live, -1);
    await insertRefreshToken(expired, DAY); // goes with its session (ON DELETE CASCADE)
    await insertRefreshToken(longRevoked, DAY);

    const code = (expiresIn: number) => ({
      code_hash: sha256Hex(randomToken()),
      client_id: client.clientId,
      user_id: user.id,
      redirect_uri: 'https://app.test/callback',
      scope: 'openid',
      code_challenge: 'x'.repeat(43),
      created_at: now,
      expires_at: addSeconds(now, expiresIn),
    });
    const liveCode = code(600);
    await t.db('oauth_codes').insert([liveCode, code(-1)]);

    const pending = (expiresIn: number) => ({
      id: randomUUID(),
      user_id: user.id,
      client_id: client.clientId,
      redirect_uri: 'https://app.test/callback',
      scope: 'openid',
      code_challenge: 'x'.repeat(43),
      created_at: now,
      expires_at: addSeconds(now, expiresIn),
    });
    const livePending = pending(600);
    await t.db('oauth_authorization_requests').insert([livePending, pending(-1)]);

    const link = (expiresIn: number) => ({
      token_hash: sha256Hex(randomToken()),
      user_id: user.id,
      purpose: 'set_password',
      created_at: now,
      expires_at: addSeconds(now, expiresIn),
    });
    const liveLink = link(3600);
    await t.db('email_tokens').insert([liveLink, link(-1)]);

    const liveLogin = await insertLoginToken(300);
    await insertLoginToken(-1);

    await t.db('login_failures').insert([
      { email: 'idle@example.test', failures: 3, updated_at: addSeconds(now, -2 * DAY) },
      { email: 'recent@example.test', failures: 3, updated_at: addSeconds(now, -3600) },
      { email: 'locked@example.test', failures: 12, updated_at: addSeconds(now, -2 * DAY), locked_until: addSeconds(now, 600) },
    ]);

    const device = (expiresIn: number) => ({
      device_code_hash: sha256Hex(randomToken()),
      user_code_hash: sha256Hex(randomToken()),
      client_id: client.clientId,
      scope: 'openid',
      interval_s: 5,
      created_at: now,
      expires_at: addSeconds(now, expiresIn),
    });
    const liveDevice = device(600);
    await t.db('oauth_device_codes').insert([liveDevice, device(-1)]);
    const busySession = randomUUID();
    await t.db('device_code_failures').insert([
      { session_id: randomUUID(), failures: 5, window_start: addSeconds(now, -2 * DAY) },
      { session_id: busySession, failures: 2, window_start: addSeconds(now, -30) },
    ]);

    // Issue 34: spent assertion / proof identifiers, one past the time it could be accepted again.
    await t.db('oauth_used_jtis').insert([
      { key: 'live-jti', expires_at: addSeconds(now, 60) },
      { key: 'old-jti', expires_at: addSeconds(now, -1) },
    ]);

    const counts = await pruneExpired(t.ctx);
    expect(await ids('oauth_used_jtis', 'key')).toEqual(['live-jti']);
    expect(await ids('oauth_device_codes', 'device_code_hash')).toEqual([liveDevice.device_code_hash]);
    expect(await ids('device_code_failures', 'session_id')).toEqual([busySession]);
    expect(counts).toEqual({
      sessions: 2,
      refresh_tokens: 1,
      oauth_codes: 1,
      oauth_authorization_requests: 1,
      email_tokens: 1,
      login_tokens: 1,
      login_failures: 1,
      mfa_tokens: 0,
      webauthn_challenges: 0,
      idp_flows: 0,
      idp_pending_links: 0,
      oauth_device_codes: 1,
      oauth_used_jtis: 1,
      oauth_pushed_requests: 0,
      email_sign_in_requests: 0,
      device_code_failures: 1,
      registration_tokens: 0,
      saml_requests: 0,
      oauth_clients: 0,
      audit_events: 0,
      webhook_deliveries: 0,
      backchannel_logout_deliveries: 0,
      webhook_workers_released: 0,
    });

    expect(await ids('sessions', 'id')).toEqual([live, recentlyRevoked].sort());
    expect(await ids('refresh_tokens', 'id')).toEqual([liveRt]);
    expect(await ids('oauth_codes', 'code_hash')).toEqual([liveCode.code_hash]);
    expect(await ids('oauth_authorization_requests', 'id')).toEqual([livePending.id]);
    expect(await ids('email_tokens', 'token_hash')).toEqual([liveLink.token_hash]);
    expect(await ids('login_tokens', 'token_hash')).toEqual([liveLogin]);
    expect(await ids('login_failures', 'email')).toEqual(['locked@example.test', 'recent@example.test']);

    expect(Object.values(await pruneExpired(t.ctx)).every((n) => n === 0)).toBe(true);

    // Time passes: what was live expires and goes at the next run.
    t.clock.advance(2 * DAY);
    const later = await pruneExpired(t.ctx);
    expect(later).toMatchObject({ sessions: 2, oauth_codes: 1, email_tokens: 1, login_tokens: 1, login_failures: 2 });
  });

  test('works through more rows than one batch, batch by batch', async () => {
    await t.db('login_tokens').del();
    const rows = Array.from({ length: 1203 }, () => ({
      token_hash: sha256Hex(randomToken()),
      url: 'https://portal.test/',
      created_at: t.clock.now(),
      expires_at: addSeconds(t.clock.now(), -10),
    }));
    await t.db.batchInsert('login_tokens', rows, 500);
    const keep = await insertLoginToken(300);
    const counts = await pruneExpired(t.ctx, { batchSize: 500 });
    expect(counts.login_tokens).toBe(1203);
    expect(await ids('login_tokens', 'token_hash')).toEqual([keep]);
  });
});

describe('second-factor rows (CONTRACT §10)', () => {
  test('expired mfa_tokens and WebAuthn challenges are pruned, live ones kept', async () => {
    const now = t.clock.now();
    const user = await makeUser(t);
    await t.db('mfa_tokens').insert([
      { token_hash: 'live-mfa', user_id: user.id, created_at: now, expires_at: addSeconds(now, 300) },
      { token_hash: 'old-mfa', user_id: user.id, created_at: now, expires_at: addSeconds(now, -1) },
    ]);
    await t.db('webauthn_challenges').insert([
      { challenge: 'live-challenge', purpose: 'login', created_at: now, expires_at: addSeconds(now, 300) },
      { challenge: 'old-challenge', purpose: 'mfa', user_id: user.id, created_at: now, expires_at: addSeconds(now, -1) },
    ]);
    const counts = await pruneExpired(t.ctx);
    expect(counts).toMatchObject({ mfa_tokens: 1, webauthn_challenges: 1 });
    expect(await ids('mfa_tokens', 'token_hash')).toEqual(['live-mfa']);
    expect(await ids('webauthn_challenges', 'challenge')).toEqual(['live-challenge']);
  });
});

describe('SAML requests (CONTRACT §19)', () => {
  test('a pending request is kept while its ID could be replayed, and deleted 5 minutes after it expired', async () => {
    const now = t.clock.now();
    const app = await t
      .db('saml_apps')
      .insert({
        id: randomUUID(),
        name: 'Prune',
        entity_id: `https://prune-${randomUUID()}.test/sp`,
        acs_urls: JSON.stringify([{ url: 'https://prune.test/acs', binding: 'HTTP-POST', index: 0, default: true }]),
        name_id_format: 'emailAddress',
        attributes: JSON.stringify({}),
      })
      .returning('id');
    const row = (id: string, expiresIn: number, used = false) => ({
      id,
      app_id: app[0].id,
      request_id: `_${id}`,
      acs_url: 'https://prune.test/acs',
      created_at: addSeconds(now, expiresIn - 600),
      expires_at: addSeconds(now, expiresIn),
      used_at: used ? now : null,
    });
    await t
      .db('saml_requests')
      .insert([
        row('pending', 300),
        row('answered-recently', 300, true),
        row('expired-just-now', -60),
        row('expired-long-ago', -301),
        row('answered-long-ago', -3600, true),
      ]);
    const counts = await pruneExpired(t.ctx);
    expect(counts.saml_requests).toBe(2);
    expect(await ids('saml_requests', 'id')).toEqual(['answered-recently', 'expired-just-now', 'pending']);
  });
});

describe('startPruneTimer', () => {
  test('prunes on an unref()’d timer and stops when told', async () => {
    const expired = await insertLoginToken(-1);
    const spy = jest.spyOn(global, 'setInterval');
    const stop = startPruneTimer(t.ctx, 50);
    try {
      const timer = spy.mock.results[0]!.value as NodeJS.Timeout;
      expect(timer.hasRef()).toBe(false);
      // Waits for the timer to prune, with no deadline of its own: a timer that never prunes fails the test through
      // its timeout (no elapsed time is asserted).
      while (await t.db('login_tokens').where({ token_hash: expired }).first()) {
        await new Promise((r) => setTimeout(r, 25));
      }
    } finally {
      stop();
      spy.mockRestore();
    }
    const after = await insertLoginToken(-1);
    await new Promise((r) => setTimeout(r, 200));
    expect(await t.db('login_tokens').where({ token_hash: after }).first()).toBeDefined();
  }, 10_000);
});

describe('npm run prune (src/cli/prune.ts)', () => {
  test('prunes once, prints the counts per table and exits 0', async () => {
    // The CLI runs on the system clock (the test clock was moved forward above).
    const expired = sha256Hex(randomToken());
    const realNow = new Date();
    await t.db('login_tokens').insert({
      token_hash: expired,
      url: 'https://portal.test/',
      created_at: addSeconds(realNow, -600),
      expires_at: addSeconds(realNow, -60),
    });
    const { stdout } = await promisify(execFile)(
      path.resolve(__dirname, '../../node_modules/.bin/tsx'),
      [path.resolve(__dirname, '../../src/cli/prune.ts')],
      {
        env: { ...process.env, ...TEST_ENV, DATABASE_URL: t.databaseUrl, DATA_DIR: path.join(os.tmpdir(), 'sso-test-data') },
        timeout: 60_000,
      },
    );
    expect(stdout).toMatch(/^login_tokens: \d+$/m);
    expect(stdout).toMatch(/^sessions: \d+$/m);
    expect(await t.db('login_tokens').where({ token_hash: expired }).first()).toBeUndefined();
  }, 90_000);
});

describe('audit retention (AUDIT_RETENTION_DAYS, default 180)', () => {
  test('events older than the retention go, batch by batch; the rest stay; nothing else may delete them', async () => {
    const now = t.clock.now();
    const row = (daysAgo: number, i: number) => ({
      type: 'auth.login.failed',
      occurred_at: addSeconds(now, -daysAgo * DAY),
      detail: JSON.stringify({ i }),
    });
    await t.db('audit_events').insert([...Array.from({ length: 23 }, (_, i) => row(181 + i, i)), row(179, 100), row(1, 101)]);
    expect(t.config.auditRetentionDays).toBe(180);
    const counts = await pruneExpired(t.ctx, { batchSize: 10 });
    expect(counts.audit_events).toBe(23);
    const left = (await t.db('audit_events').where({ type: 'auth.login.failed' }).select('detail')) as Array<{ detail: { i: number } }>;
    expect(left.map((r) => r.detail.i).sort()).toEqual([100, 101]);
    // Outside the pruning transaction the trigger refuses the same DELETE.
    await expect(t.db('audit_events').where('occurred_at', '<', now).delete()).rejects.toThrow(/append-only/);
  });
});
