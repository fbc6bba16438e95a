import request from 'supertest';
import { jose } from '../../src/lib/jose';
import { attemptBackchannelLogout } from '../../src/services/oidc/backchannel-logout.service';
import { pruneExpired } from '../../src/services/prune.service';
import { releaseStaleWorkerLocks, startWebhookWorker, type WebhookWorker } from '../../src/services/webhooks/queue';
import { startLogoutReceiver, type LogoutReceiver } from '../helpers/backchannel';
import { makeSignedInUser, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { basicAuth, csrfFrom, issueOAuthTokens, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { RETRY_DELAYS_SECONDS } from '../../src/services/webhooks/webhook-policy';

/**
 * OpenID Connect Back-Channel Logout 1.0 end to end: clients register a backchannel_logout_uri (admin API, dynamic
 * registration), the id_token's sid names the browser session, and every way a browser session ends sends each client
 * holding a session under it a signed logout token through the webhooks' queue, retried, recorded and audited; the
 * client's sessions under it end too.
 */
const FAST_RETRIES = [0.2, 0.2];
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const REDIRECT = 'https://app.test/callback';

let t: TestApp;
let admin: string;
let worker: WebhookWorker;
let receiver: LogoutReceiver;

beforeAll(async () => {
  t = await createTestApp({ env: { CLIENT_REGISTRATION: 'open' } });
  admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
  worker = await startWebhookWorker(t.ctx, {
    connectionString: t.databaseUrl,
    retryDelaysSeconds: FAST_RETRIES,
    pollIntervalMs: 100,
    concurrency: 2,
  });
  receiver = await startLogoutReceiver({ issuer: t.config.oidcIssuer, jwks: async () => (await api().get('/api/oauth/jwks')).body });
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await t.close();
});
beforeEach(() => {
  receiver.received.length = 0;
  receiver.answer = () => 200;
});

const api = () => request(t.app);

interface Rp {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  name: string;
}

async function createRp(body: Record<string, unknown> = {}): Promise<Rp> {
  const res = await api()
    .post('/api/admin/oauth-clients')
    .set('Authorization', admin)
    .send({ name: 'RP', redirect_uris: [REDIRECT], backchannel_logout_uri: receiver.url, ...body });
  expect(res.status).toBe(201);
  return { clientId: res.body.client.client_id, clientSecret: res.body.client_secret, redirectUris: [REDIRECT], name: 'RP' };
}

const sidOf = (jwt: string) => String(jose().decodeJwt(jwt).sid);

/** A person signed in (API login: cookies and tokens of one browser session) who signed in to each client through us. */
async function signedInTo(clients: Rp[], user?: Awaited<ReturnType<typeof makeUser>>) {
  const person = user ?? (await makeUser(t));
  const browser = await signIn(t, person);
  const tokens: Array<{ access_token: string; refresh_token: string; id_token: string }> = [];
  for (const client of clients) tokens.push(await codeFlow(browser.agent, client));
  return { person, browser, tokens };
}

/** authorize -> approve -> code -> tokens, as a client does (the openid scope: an id_token). */
async function codeFlow(agent: Awaited<ReturnType<typeof signIn>>['agent'], client: Rp) {
  const body = await issueOAuthTokens(t, agent, { ...client, id: client.clientId } as never);
  return { ...body, id_token: String((body as Record<string, unknown>).id_token) };
}

/** The client's deliveries once `done` holds for them (the receiver answers before the attempt is recorded). */
async function deliveriesOnce(clientId: string, done: (rows: Array<Record<string, unknown>>) => boolean) {
  for (let i = 0; i < 200; i++) {
    const rows = await t.db('backchannel_logout_deliveries').where({ client_id: clientId }).orderBy('id');
    if (done(rows)) return rows;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`deliveries of ${clientId} never reached the expected state`);
}

async function refreshWorks(client: Rp, refreshToken: string): Promise<boolean> {
  const res = await api()
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(client.clientId, client.clientSecret))
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: refreshToken });
  return res.status === 200;
}

describe('client registration', () => {
  test('admin API: create, read, update and clear; discovery announces it', async () => {
    const rp = await createRp({ backchannel_logout_session_required: true });
    const read = await api().get(`/api/admin/oauth-clients/${rp.clientId}`).set('Authorization', admin);
    expect(read.body.client).toMatchObject({ backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true });
    const other = receiver.url.replace('/backchannel-logout', '/other');
    const updated = await api()
      .put(`/api/admin/oauth-clients/${rp.clientId}`)
      .set('Authorization', admin)
      .send({ backchannel_logout_uri: other });
    expect(updated.status).toBe(200);
    expect(updated.body.client.backchannel_logout_uri).toBe(other);
    const cleared = await api()
      .put(`/api/admin/oauth-clients/${rp.clientId}`)
      .set('Authorization', admin)
      .send({ backchannel_logout_uri: null });
    expect(cleared.body.client.backchannel_logout_uri).toBeNull();

    const discovery = await api().get('/.well-known/openid-configuration');
    expect(discovery.body).toMatchObject({ backchannel_logout_supported: true, backchannel_logout_session_supported: true });
  });

  test.each([
    ['ftp://127.0.0.1/logout', /https/],
    ['http://example.com/logout', /https/],
    ['https://127.0.0.1/logout#frag', /fragment/],
    ['https://user:pw@127.0.0.1/logout', /credentials/],
    ['not-a-url', /absolute URL/],
    ['https://no-such-host.invalid/logout', /does not resolve/],
  ])('admin API refuses %s', async (uri, message) => {
    const res = await api()
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin)
      .send({ name: 'RP', redirect_uris: [REDIRECT], backchannel_logout_uri: uri });
    expect(res.status).toBe(400);
    expect(res.body.details[0]).toMatchObject({ path: 'backchannel_logout_uri' });
    expect(res.body.details[0].message).toMatch(message);
  });

  test('admin API refuses a non-string and a non-boolean', async () => {
    for (const body of [{ backchannel_logout_uri: 42 }, { backchannel_logout_session_required: 'yes' }]) {
      const res = await api()
        .post('/api/admin/oauth-clients')
        .set('Authorization', admin)
        .send({ name: 'RP', redirect_uris: [REDIRECT], ...body });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    }
  });

  describe('in production', () => {
    let prod: TestApp;
    let prodAdmin: string;
    beforeAll(async () => {
      prod = await createTestApp({
        env: { NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:2525', COOKIE_SECURE: 'false', CLIENT_REGISTRATION: 'open' },
      });
      prodAdmin = (await makeSignedInUser(prod, ['super_admin'])).bearer;
    });
    afterAll(async () => prod.close());

    test.each([
      ['http://127.0.0.1:8080/logout', /https/],
      ['https://10.1.2.3/logout', /WEBHOOK_ALLOW_PRIVATE/],
      ['https://169.254.169.254/logout', /WEBHOOK_ALLOW_PRIVATE/],
      ['https://[::1]/logout', /WEBHOOK_ALLOW_PRIVATE/],
    ])('%s is refused', async (uri, message) => {
      const res = await request(prod.app)
        .post('/api/admin/oauth-clients')
        .set('Authorization', prodAdmin)
        .send({ name: 'RP', redirect_uris: [REDIRECT], backchannel_logout_uri: uri });
      expect(res.status).toBe(400);
      expect(res.body.details[0].path).toBe('backchannel_logout_uri');
      expect(res.body.details[0].message).toMatch(message);
    });

    // Open registration: anyone may register a back-channel logout address, under the very same rules (the server
    // POSTs only to public https addresses, never to itself; docs/backchannel-logout.md "Dynamic registration").
    test.each([
      ['http://93.184.215.14/logout', /https/],
      ['https://10.1.2.3/logout', /WEBHOOK_ALLOW_PRIVATE/],
      ['https://169.254.169.254/latest/meta-data', /WEBHOOK_ALLOW_PRIVATE/],
      ['https://[::1]/logout', /WEBHOOK_ALLOW_PRIVATE/],
      ['https://localhost/logout', /WEBHOOK_ALLOW_PRIVATE/],
    ])('dynamic registration refuses %s with invalid_client_metadata', async (uri, message) => {
      const res = await request(prod.app)
        .post('/api/oauth/register')
        .send({ redirect_uris: ['https://rp.example/cb'], backchannel_logout_uri: uri });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_client_metadata');
      expect(res.body.error_description).toMatch(message);
      const update = await request(prod.app)
        .post('/api/oauth/register')
        .send({ redirect_uris: ['https://rp.example/cb'], backchannel_logout_uri: 'https://93.184.215.14/logout' });
      expect(update.status).toBe(201);
      const changed = await request(prod.app)
        .put(`/api/oauth/register/${update.body.client_id}`)
        .set('Authorization', `Bearer ${update.body.registration_access_token}`)
        .send({ client_id: update.body.client_id, redirect_uris: ['https://rp.example/cb'], backchannel_logout_uri: uri });
      expect(changed.status).toBe(400);
      expect(changed.body.error).toBe('invalid_client_metadata');
    });

    test('a public https address is accepted', async () => {
      const res = await request(prod.app)
        .post('/api/admin/oauth-clients')
        .set('Authorization', prodAdmin)
        .send({ name: 'RP', redirect_uris: [REDIRECT], backchannel_logout_uri: 'https://93.184.215.14/logout' });
      expect(res.status).toBe(201);
    });
  });

  test('dynamic registration: registered, read back, refused with invalid_client_metadata', async () => {
    const ok = await api()
      .post('/api/oauth/register')
      .send({ redirect_uris: ['https://rp.test/cb'], backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true });
    const bad = await api()
      .post('/api/oauth/register')
      .send({ redirect_uris: ['https://rp.test/cb'], backchannel_logout_uri: 'http://example.com/x' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_client_metadata');
    const orphan = await api()
      .post('/api/oauth/register')
      .send({ redirect_uris: ['https://rp.test/cb'], backchannel_logout_session_required: true });
    expect(orphan.status).toBe(400);
  });
});

describe('logout tokens', () => {
  test("the id_token's sid names the browser session; sign-out sends every client holding a session a signed logout token", async () => {
    const a = await createRp();
    const b = await createRp();
    const quiet = await createRp({ backchannel_logout_uri: undefined });
    await api().put(`/api/admin/oauth-clients/${quiet.clientId}`).set('Authorization', admin).send({ backchannel_logout_uri: null });
    const { person, browser, tokens } = await signedInTo([a, b, quiet]);
    const browserSid = String(jose().decodeJwt(browser.accessToken).sid);
    for (const t0 of tokens) expect(sidOf(t0.id_token)).toBe(browserSid);
    // A refreshed id_token keeps naming the browser session.
    const refreshed = await api()
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(a.clientId, a.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens[0]!.refresh_token });
    expect(sidOf(refreshed.body.id_token)).toBe(browserSid);

    expect((await api().post('/api/auth/logout').set('Authorization', `Bearer ${browser.accessToken}`)).status).toBe(200);
    await receiver.waitFor((r) => r.length >= 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(2);
    const byAud = new Map(receiver.received.map((r) => [r.claims.aud, r]));
    expect([...byAud.keys()].sort()).toEqual([a.clientId, b.clientId].sort());
    for (const got of receiver.received) {
      expect(got.verified).toBe(true);
      expect(got.contentType).toBe('application/x-www-form-urlencoded');
      expect(got.header.typ).toBe('logout+jwt');
      expect(got.claims).toMatchObject({ iss: t.config.oidcIssuer, sub: person.id, sid: browserSid, events: { [EVENT]: {} } });
      expect(got.claims).not.toHaveProperty('nonce');
      expect(typeof got.claims.jti).toBe('string');
      expect(Number(got.claims.exp) - Number(got.claims.iat)).toBe(120);
    }
    // The clients' sessions under it ended: refresh tokens and access tokens stop working.
    expect(await refreshWorks(b, tokens[1]!.refresh_token)).toBe(false);
    expect((await api().get('/api/oauth/userinfo').set('Authorization', `Bearer ${tokens[2]!.access_token}`)).status).toBe(401);
    // Recorded and audited.
    await deliveriesOnce(a.clientId, (list) => list[0]?.status === 'delivered');
    const deliveries = await api().get(`/api/admin/oauth-clients/${a.clientId}/backchannel-logout-deliveries`).set('Authorization', admin);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.deliveries[0]).toMatchObject({
      status: 'delivered',
      attempts: 1,
      sid: browserSid,
      user_id: person.id,
      last_response_status: 200,
    });
    const audit = await t.db('audit_events').where({ type: 'oidc.backchannel_logout.delivered', client_id: a.clientId });
    expect(audit).toHaveLength(1);
    expect(audit[0].subject_id).toBe(person.id);
  });

  type Ended = Awaited<ReturnType<typeof signedInTo>>;
  const ways: Array<[string, (s: Ended, rp: Rp) => Promise<void>]> = [
    [
      'the page sign-out',
      async ({ browser }) => {
        const csrf = await csrfFrom(browser.agent, '/login');
        expect((await browser.agent.post('/logout').type('form').send({ csrf })).status).toBe(303);
      },
    ],
    [
      'RP-initiated logout through another client',
      async ({ browser }) => {
        const other = await createRp({ backchannel_logout_uri: null });
        const { id_token } = await codeFlow(browser.agent, other);
        const res = await browser.agent.get(`/api/oauth/logout?${new URLSearchParams({ id_token_hint: id_token })}`);
        expect(res.status).toBeLessThan(400);
      },
    ],
    [
      'sign-out everywhere (another session of the person)',
      async ({ person }) => {
        const elsewhere = await signIn(t, person);
        const res = await api().post('/api/auth/sessions/revoke-others').set('Authorization', `Bearer ${elsewhere.accessToken}`);
        expect(res.body.revoked).toBeGreaterThanOrEqual(1);
      },
    ],
    [
      'an administrator revoking the session',
      async ({ person, browser }) => {
        const sid = String(jose().decodeJwt(browser.accessToken).sid);
        expect((await api().delete(`/api/users/${person.id}/sessions/${sid}`).set('Authorization', admin)).status).toBe(204);
      },
    ],
    [
      'first-party refresh-token reuse',
      async ({ browser }) => {
        const first = await api().post('/api/auth/refresh-token').send({ refreshToken: browser.refreshToken });
        expect(first.status).toBe(200);
        t.clock.advance(120);
        const reused = await api().post('/api/auth/refresh-token').send({ refreshToken: browser.refreshToken });
        expect(reused.status).toBe(401);
      },
    ],
    [
      "the client's own refresh-token reuse",
      async ({ tokens }, rp) => {
        expect(await refreshWorks(rp, tokens[0]!.refresh_token)).toBe(true);
        t.clock.advance(120);
        expect(await refreshWorks(rp, tokens[0]!.refresh_token)).toBe(false);
      },
    ],
    [
      'a password reset',
      async ({ person }) => {
        await api().post('/api/auth/forgot-password').send({ email: person.email }).expect(202);
        const mail = [...t.mails].reverse().find((m) => m.to === person.email && m.text.includes('/set-password?token='))!;
        const token = new URL(/https?:\/\/\S+\/set-password\?token=\S+/.exec(mail.text)![0]).searchParams.get('token');
        expect((await api().post('/api/auth/set-password').send({ token, password: 'another-horse-42' })).status).toBe(200);
      },
    ],
    [
      'deactivation',
      async ({ person }) => {
        expect((await api().delete(`/api/users/${person.id}`).set('Authorization', admin)).status).toBe(200);
      },
    ],
    [
      'SCIM active: false',
      async ({ person }) => {
        const conn = await api()
          .post('/api/admin/scim-connections')
          .set('Authorization', admin)
          .send({ name: 'Directory', description: '' });
        const res = await api()
          .patch(`/scim/v2/Users/${person.id}`)
          .set('Authorization', `Bearer ${conn.body.token}`)
          .set('Content-Type', 'application/scim+json')
          .send({
            schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
            Operations: [{ op: 'replace', path: 'active', value: false }],
          });
        expect(res.status).toBe(200);
      },
    ],
  ];

  test.each(ways)('%s sends the logout token and ends the client session', async (_name, end) => {
    const rp = await createRp();
    const s = await signedInTo([rp], await makeUser(t, { email: uniqueEmail('bcl') }));
    const browserSid = String(jose().decodeJwt(s.browser.accessToken).sid);
    await end(s, rp);
    await receiver.waitFor((r) => r.some((x) => x.claims.aud === rp.clientId));
    const got = receiver.received.find((x) => x.claims.aud === rp.clientId)!;
    expect(got.verified).toBe(true);
    expect(got.claims).toMatchObject({ sid: browserSid, sub: s.person.id });
    const live = await t.db('sessions').where({ client_id: rp.clientId, user_id: s.person.id }).whereNull('revoked_at');
    expect(live).toHaveLength(0);
  });
});

describe('delivery', () => {
  test('a failed attempt is retried; spent retries are recorded as failed and audited', async () => {
    const retried = await createRp();
    receiver.answer = (n) => (n === 1 ? 503 : 200);
    const first = await signedInTo([retried]);
    await api().post('/api/auth/logout').set('Authorization', `Bearer ${first.browser.accessToken}`).expect(200);
    const rows = await deliveriesOnce(retried.clientId, (list) => list[0]?.status !== 'pending');
    expect(receiver.received).toHaveLength(2);
    expect(rows).toMatchObject([{ status: 'delivered', attempts: 2 }]);

    receiver.received.length = 0;
    receiver.answer = () => 500;
    const failing = await createRp();
    const second = await signedInTo([failing]);
    await api().post('/api/auth/logout').set('Authorization', `Bearer ${second.browser.accessToken}`).expect(200);
    const [row] = await deliveriesOnce(failing.clientId, (list) => list[0]?.status === 'failed');
    expect(receiver.received).toHaveLength(3);
    expect(row).toMatchObject({ status: 'failed', attempts: 3, last_response_status: 500 });
    const audit = await t.db('audit_events').where({ type: 'oidc.backchannel_logout.failed', client_id: failing.clientId });
    expect(audit).toHaveLength(1);
  });

  test('the production schedule retries within a minute first', async () => {
    expect(RETRY_DELAYS_SECONDS[0]).toBeLessThanOrEqual(60);
    const rp = await createRp();
    const s = await signedInTo([rp]);
    // Without the worker's shortened schedule: one attempt by hand, answered 503, schedules the next in 5 s.
    receiver.answer = () => 503;
    await worker.stop();
    try {
      await api().post('/api/auth/logout').set('Authorization', `Bearer ${s.browser.accessToken}`).expect(200);
      const [delivery] = await t.db('backchannel_logout_deliveries').where({ client_id: rp.clientId });
      const outcome = await attemptBackchannelLogout(t.ctx, String(delivery.id));
      expect(outcome).toMatchObject({ status: 'pending', responseStatus: 503, retryInSeconds: 5 });
      const jobs = await t.db.raw(`select run_at - now() as wait from graphile_worker.jobs where key = ?`, [
        `backchannel-logout:${delivery.id}`,
      ]);
      expect(jobs.rows).toHaveLength(1);
    } finally {
      receiver.answer = () => 200;
      worker = await startWebhookWorker(t.ctx, { connectionString: t.databaseUrl, retryDelaysSeconds: FAST_RETRIES, pollIntervalMs: 100 });
    }
    await receiver.waitFor((r) => r.some((x) => x.claims.aud === rp.clientId && x.status === 200), 20_000);
  });

  test('after a crash: a delivery whose worker died is attempted again once its lock is released', async () => {
    const rp = await createRp();
    const s = await signedInTo([rp]);
    await worker.stop();
    try {
      await api().post('/api/auth/logout').set('Authorization', `Bearer ${s.browser.accessToken}`).expect(200);
      const [delivery] = await t.db('backchannel_logout_deliveries').where({ client_id: rp.clientId });
      // A worker that died mid-attempt: its job is locked by it, two minutes ago.
      await t.db.raw(
        `update graphile_worker._private_jobs set locked_by = 'dead-worker', locked_at = now() - interval '2 minutes' where key = ?`,
        [`backchannel-logout:${delivery.id}`],
      );
      expect(await releaseStaleWorkerLocks(t.db)).toBe(1);
    } finally {
      worker = await startWebhookWorker(t.ctx, { connectionString: t.databaseUrl, retryDelaysSeconds: FAST_RETRIES, pollIntervalMs: 100 });
    }
    const [row] = await deliveriesOnce(rp.clientId, (list) => list[0]?.status !== 'pending');
    expect(row!.status).toBe('delivered');
    expect(receiver.received.filter((x) => x.claims.aud === rp.clientId)).toHaveLength(1);
  });

  test('a client without a logout address or deactivated meanwhile: the delivery fails without a request', async () => {
    const rp = await createRp();
    const s = await signedInTo([rp]);
    await worker.stop();
    try {
      await api().post('/api/auth/logout').set('Authorization', `Bearer ${s.browser.accessToken}`).expect(200);
      await api()
        .put(`/api/admin/oauth-clients/${rp.clientId}`)
        .set('Authorization', admin)
        .send({ backchannel_logout_uri: null })
        .expect(200);
      const [delivery] = await t.db('backchannel_logout_deliveries').where({ client_id: rp.clientId });
      expect(await attemptBackchannelLogout(t.ctx, String(delivery.id))).toBeUndefined();
      const [row] = await t.db('backchannel_logout_deliveries').where({ id: delivery.id });
      expect(row).toMatchObject({ status: 'failed', attempts: 0 });
      expect(receiver.received.filter((x) => x.claims.aud === rp.clientId)).toHaveLength(0);
    } finally {
      worker = await startWebhookWorker(t.ctx, { connectionString: t.databaseUrl, retryDelaysSeconds: FAST_RETRIES, pollIntervalMs: 100 });
    }
  });
});

describe('sessions deleted rather than revoked (the same database rule)', () => {
  /** Waits until every client in `expected` got its token, then a little longer to see that nobody else got one. */
  async function toldExactly(sub: string, expected: string[]) {
    await receiver.waitFor((r) => expected.every((aud) => r.some((x) => x.claims.aud === aud && x.claims.sub === sub)));
    await new Promise((r) => setTimeout(r, 500));
    return receiver.received.filter((x) => x.claims.sub === sub);
  }

  test('SCIM DELETE /Users: every client holding a session under the account gets a logout token', async () => {
    const [a, b] = [await createRp(), await createRp()];
    const s = await signedInTo([a, b], await makeUser(t, { email: uniqueEmail('bcl-scim') }));
    const browserSid = String(jose().decodeJwt(s.browser.accessToken).sid);
    const conn = await api().post('/api/admin/scim-connections').set('Authorization', admin).send({ name: 'Directory', description: '' });
    const res = await api().delete(`/scim/v2/Users/${s.person.id}`).set('Authorization', `Bearer ${conn.body.token}`);
    expect(res.status).toBe(204);
    expect(await t.db('users').where({ id: s.person.id })).toHaveLength(0);
    const told = await toldExactly(s.person.id, [a.clientId, b.clientId]);
    expect(told.map((x) => x.claims.aud).sort()).toEqual([a.clientId, b.clientId].sort());
    for (const got of told) {
      expect(got.verified).toBe(true);
      expect(got.claims).toMatchObject({ sid: browserSid, sub: s.person.id });
    }
    // Recorded for the console although the account is gone.
    await deliveriesOnce(a.clientId, (rows) => rows[0]?.status === 'delivered');
    const listed = await api().get(`/api/admin/oauth-clients/${a.clientId}/backchannel-logout-deliveries`).set('Authorization', admin);
    expect(listed.body.deliveries[0]).toMatchObject({ status: 'delivered', user_id: s.person.id, sid: browserSid });
  });

  test('an account deleted by any other path (its sessions go by cascade) is told too', async () => {
    const rp = await createRp();
    const s = await signedInTo([rp]);
    await t.db('users').where({ id: s.person.id }).delete();
    const told = await toldExactly(s.person.id, [rp.clientId]);
    expect(told).toHaveLength(1);
    expect(told[0]!.claims.sid).toBe(String(jose().decodeJwt(s.browser.accessToken).sid));
  });

  test("a browser session deleted on its own ends the applications' sessions under it", async () => {
    const rp = await createRp();
    const s = await signedInTo([rp]);
    const browserSid = String(jose().decodeJwt(s.browser.accessToken).sid);
    await t.db('sessions').where({ id: browserSid }).delete();
    const told = await toldExactly(s.person.id, [rp.clientId]);
    expect(told[0]!.claims.sid).toBe(browserSid);
    expect(await refreshWorks(rp, s.tokens[0]!.refresh_token)).toBe(false);
  });

  test('pruning sends nothing: an expired session is not a sign-out, a long-revoked one was told when it ended', async () => {
    const expired = await createRp();
    const revoked = await createRp();
    const e = await signedInTo([expired]);
    const r = await signedInTo([revoked]);
    await api().post('/api/auth/logout').set('Authorization', `Bearer ${r.browser.accessToken}`).expect(200);
    await receiver.waitFor((got) => got.some((x) => x.claims.aud === revoked.clientId));
    // Past their expiry, and revoked long ago, as the prune finds them.
    await t
      .db('sessions')
      .where({ user_id: e.person.id })
      .update({ expires_at: new Date('2001-01-01T00:00:00Z') });
    await t
      .db('sessions')
      .where({ user_id: r.person.id })
      .update({ revoked_at: new Date('2001-01-01T00:00:00Z') });
    const counts = await pruneExpired(t.ctx);
    expect(counts.sessions).toBeGreaterThanOrEqual(4);
    expect(await t.db('sessions').whereIn('user_id', [e.person.id, r.person.id])).toHaveLength(0);
    await new Promise((res) => setTimeout(res, 800));
    expect(receiver.received.filter((x) => x.claims.aud === expired.clientId)).toHaveLength(0);
    expect(receiver.received.filter((x) => x.claims.aud === revoked.clientId)).toHaveLength(1);
    expect(await t.db('backchannel_logout_deliveries').where({ client_id: expired.clientId })).toHaveLength(0);
    expect(await t.db('backchannel_logout_deliveries').where({ client_id: revoked.clientId })).toHaveLength(1);
  });

  test('an unused self-registered client pruned with its sessions is told nothing, and the prune does not fail', async () => {
    // Open registration makes public clients: the code is exchanged with client_id alone.
    const reg = await api()
      .post('/api/oauth/register')
      .send({ redirect_uris: [REDIRECT], backchannel_logout_uri: receiver.url, client_name: 'Gone soon' });
    expect(reg.status).toBe(201);
    const rp = { clientId: String(reg.body.client_id), redirectUris: [REDIRECT] };
    const s = await signedInTo([]);
    const { code, verifier } = await obtainCode(s.browser.agent, rp);
    const exchanged = await api()
      .post('/api/oauth/token')
      .type('form')
      .send({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: rp.clientId });
    expect(exchanged.status).toBe(200);
    expect(await t.db('sessions').where({ client_id: rp.clientId })).toHaveLength(1);
    await t
      .db('oauth_clients')
      .where({ client_id: rp.clientId })
      .update({
        created_at: new Date('2001-01-01T00:00:00Z'),
        last_used_at: new Date('2001-01-01T00:00:00Z'),
      });
    await pruneExpired(t.ctx);
    expect(await t.db('oauth_clients').where({ client_id: rp.clientId })).toHaveLength(0);
    expect(await t.db('sessions').where({ client_id: rp.clientId })).toHaveLength(0);
    // The person's own session here is untouched.
    expect((await api().get('/api/auth/me').set('Authorization', `Bearer ${s.browser.accessToken}`)).status).toBe(200);
    await new Promise((res) => setTimeout(res, 500));
    expect(receiver.received.filter((x) => x.claims.aud === rp.clientId)).toHaveLength(0);
  });
});

test('deliveries are kept as long as the audit log, then pruned; a pending one never', async () => {
  const rp = await createRp();
  const old = new Date(Date.now() - (t.config.auditRetentionDays + 1) * 24 * 3600 * 1000);
  const user = (await makeUser(t)).id;
  const sid = () => crypto.randomUUID();
  await t.db('backchannel_logout_deliveries').insert([
    { client_id: rp.clientId, user_id: user, sid: sid(), status: 'delivered', attempts: 1, created_at: old },
    { client_id: rp.clientId, user_id: user, sid: sid(), status: 'failed', attempts: 7, created_at: old },
    { client_id: rp.clientId, user_id: user, sid: sid(), status: 'pending', attempts: 0, next_attempt_at: null, created_at: old },
    { client_id: rp.clientId, user_id: user, sid: sid(), status: 'delivered', attempts: 1 },
  ]);
  const counts = await pruneExpired(t.ctx);
  expect(counts.backchannel_logout_deliveries).toBe(2);
  const left = await t.db('backchannel_logout_deliveries').where({ client_id: rp.clientId }).orderBy('id');
  expect(left.map((r) => r.status)).toEqual(['pending', 'delivered']);
});
