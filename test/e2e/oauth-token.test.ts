import request from 'supertest';
import * as clientsRepo from '../../src/db/repositories/oauth-clients.repo';
import * as codesRepo from '../../src/db/repositories/oauth-codes.repo';
import * as refreshRepo from '../../src/db/repositories/refresh-tokens.repo';
import { insertClient } from '../../src/db/repositories/oauth-clients.repo';
import { sha256Hex } from '../../src/lib/crypto';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { basicAuth, exchangeCode, issueOAuthTokens, obtainCode, type TestClient } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function setup() {
  const user = await makeUser(t);
  const { agent } = await signIn(t, user);
  const client = await makeClient(t);
  return { user, agent, client };
}

const me = (accessToken: string) => request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`);

/** `read`, each of whose calls first waits `delayOf(n)` ms (n: 1 for the first call): a step slowed for a race. */
function slowed<A extends unknown[], R>(read: (...args: A) => Promise<R>, delayOf: (call: number) => number) {
  let calls = 0;
  return async (...args: A): Promise<R> => {
    calls += 1;
    const ms = delayOf(calls);
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    return read(...args);
  };
}

/** `count` exchanges of one code at once, while `slow` (a spy) is in place; it is restored afterwards. */
async function exchangesAtOnce(count: number, client: TestClient, code: { code: string; verifier: string }, slow: jest.SpyInstance) {
  try {
    return await Promise.all(Array.from({ length: count }, () => exchangeCode(t, client, code)));
  } finally {
    slow.mockRestore();
  }
}

describe('POST /api/oauth/token > authorization_code', () => {
  test('Basic auth, form body: exactly the spec fields (+ id_token for openid, CONTRACT §9), no-store, session bound to the client', async () => {
    const { user, agent, client } = await setup();
    const { code, verifier } = await obtainCode(agent, client);
    const res = await exchangeCode(t, client, { code, verifier });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type']);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid profile email' });
    const claims = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({
      userId: user.id,
      client_id: client.clientId,
      scope: 'openid profile email',
      iss: 'service-sso',
      aud: 'service',
    });
    const session = await t.db('sessions').where({ id: claims.sid }).first();
    expect(session).toMatchObject({ user_id: user.id, client_id: client.clientId, revoked_at: null });
    const codeRow = await t
      .db('oauth_codes')
      .where({ code_hash: sha256Hex(code) })
      .first();
    expect(codeRow.used_at).not.toBeNull();
    expect(codeRow.session_id).toBe(claims.sid);
    expect((await me(res.body.access_token)).status).toBe(200);
    const grant = await t.db('oauth_grants').where({ user_id: user.id, client_id: client.clientId }).first();
    expect(grant.last_used_at).not.toBeNull();
  });

  test('client_secret_post with a JSON body', async () => {
    const { agent, client } = await setup();
    const { code, verifier } = await obtainCode(agent, client);
    const res = await request(t.app).post('/api/oauth/token').send({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: client.redirectUris[0],
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
  });

  test('wrong PKCE verifier -> invalid_grant "Invalid PKCE verifier", no session', async () => {
    const { user, agent, client } = await setup();
    const { code } = await obtainCode(agent, client);
    const before = await t.db('sessions').where({ user_id: user.id }).count('* as n').first();
    const res = await exchangeCode(t, client, { code, verifier: 'x'.repeat(43) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid PKCE verifier' });
    expect(res.headers['cache-control']).toBe('no-store');
    const after = await t.db('sessions').where({ user_id: user.id }).count('* as n').first();
    expect(after).toEqual(before);
  });

  test('missing code_verifier -> invalid_request', async () => {
    const { agent, client } = await setup();
    const { code } = await obtainCode(agent, client);
    const res = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0] });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test('redirect_uri different from the authorize request -> invalid_grant', async () => {
    const client = await makeClient(t, { redirectUris: ['https://app.test/a', 'https://app.test/b'] });
    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier } = await obtainCode(agent, client);
    const res = await exchangeCode(t, client, { code, verifier, redirectUri: 'https://app.test/b' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  test('reused code -> invalid_grant and the tokens of the first exchange are revoked', async () => {
    const { agent, client } = await setup();
    const { code, verifier } = await obtainCode(agent, client);
    const first = await exchangeCode(t, client, { code, verifier });
    expect(first.status).toBe(200);
    expect((await me(first.body.access_token)).status).toBe(200);
    const replay = await exchangeCode(t, client, { code, verifier });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await me(first.body.access_token)).status).toBe(401);
    const refresh = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  test('expired code (10 minutes) -> invalid_grant', async () => {
    const { agent, client } = await setup();
    const { code, verifier } = await obtainCode(agent, client);
    t.clock.advance(601);
    const res = await exchangeCode(t, client, { code, verifier });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  test('code of another client -> invalid_grant, and the code stays usable by its own client', async () => {
    const { agent, client } = await setup();
    const other = await makeClient(t, { redirectUris: client.redirectUris });
    const { code, verifier } = await obtainCode(agent, client);
    const res = await exchangeCode(t, other, { code, verifier });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect((await exchangeCode(t, client, { code, verifier })).status).toBe(200);
  });

  test('30 concurrent exchanges of one code -> exactly one 200, no 5xx', async () => {
    const { agent, client } = await setup();
    const { code, verifier } = await obtainCode(agent, client);
    const results = await Promise.all(Array.from({ length: 30 }, () => exchangeCode(t, client, { code, verifier })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s >= 500)).toHaveLength(0);
    for (const r of results.filter((x) => x.status !== 200)) expect(r.body.error).toBe('invalid_grant');
  });

  test('the losers of a concurrent exchange are refused and revoke nothing; a presentation after the exchange still revokes', async () => {
    const { agent, client } = await setup();
    const { code, verifier } = await obtainCode(agent, client);
    // Every presentation reads the code slowly, and the last one slower still: the winner commits while the losers are
    // still looking, and the last loser looks only after that commit (as on a loaded machine). Each of those was a
    // window in which a loser took the freshly committed use for a replay and revoked the winner's session.
    const read = slowed(codesRepo.findAuthorizationCode, (n) => (n === 5 ? 2500 : 1000));
    const results = await exchangesAtOnce(
      5,
      client,
      { code, verifier },
      jest.spyOn(codesRepo, 'findAuthorizationCode').mockImplementation(read),
    );
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expect(r.body.error).toBe('invalid_grant');
    const [winner] = winners;
    expect((await me(winner.body.access_token)).status).toBe(200);
    const replayed = () => t.db('audit_events').where({ type: 'oauth.code.replayed', client_id: client.clientId });
    expect(await replayed()).toHaveLength(0);

    // After the exchange, the code presented again is a replay: it revokes what the exchange issued (RFC 6749 §4.1.2).
    const replay = await exchangeCode(t, client, { code, verifier });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await me(winner.body.access_token)).status).toBe(401);
    expect(await replayed()).toHaveLength(1);
  });

  test('a loser slow to authenticate (it arrived before the code was taken) revokes nothing either', async () => {
    const { agent, client } = await setup();
    const { code, verifier } = await obtainCode(agent, client);
    // The second presentation's client lookup is slow: the first takes the code and commits meanwhile, and the second
    // reaches the exchange (and sees the use) only after that. It came before the code was taken: a loser, not a replay.
    const read = slowed(clientsRepo.findClientById, (n) => (n === 2 ? 1500 : 0));
    const results = await exchangesAtOnce(
      2,
      client,
      { code, verifier },
      jest.spyOn(clientsRepo, 'findClientById').mockImplementation(read),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    const [winner] = results.filter((r) => r.status === 200);
    expect((await me(winner.body.access_token)).status).toBe(200);
    expect(await t.db('audit_events').where({ type: 'oauth.code.replayed', client_id: client.clientId })).toHaveLength(0);
  });

  test('a database failure answers 503 temporarily_unavailable and burns nothing', async () => {
    const { agent, client } = await setup();
    const { code, verifier } = await obtainCode(agent, client);
    const spy = jest
      .spyOn(codesRepo, 'setAuthorizationCodeSession')
      .mockRejectedValueOnce(Object.assign(new Error('Connection terminated'), { code: 'ECONNRESET' }));
    try {
      const failed = await exchangeCode(t, client, { code, verifier });
      expect(failed.status).toBe(503);
      expect(failed.body.error).toBe('temporarily_unavailable');
      const row = await t
        .db('oauth_codes')
        .where({ code_hash: sha256Hex(code) })
        .first();
      expect(row.used_at).toBeNull();
    } finally {
      spy.mockRestore();
    }
    expect((await exchangeCode(t, client, { code, verifier })).status).toBe(200);
  });
});

describe('POST /api/oauth/token > client authentication', () => {
  async function codeFor(client: TestClient) {
    const { agent } = await signIn(t, await makeUser(t));
    return obtainCode(agent, client, { scope: 'openid' });
  }

  test('wrong secret with Basic -> 401 invalid_client and WWW-Authenticate: Basic', async () => {
    const { client } = await setup();
    const res = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, 'wrong'))
      .type('form')
      .send({ grant_type: 'authorization_code', code: 'x', code_verifier: 'y', redirect_uri: client.redirectUris[0] });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(res.headers['www-authenticate']).toMatch(/^Basic/);
  });

  test('wrong secret in the body -> 401 invalid_client without WWW-Authenticate', async () => {
    const { client } = await setup();
    const res = await request(t.app)
      .post('/api/oauth/token')
      .send({ grant_type: 'refresh_token', refresh_token: 'x', client_id: client.clientId, client_secret: 'nope' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  test('no client authentication -> 401 invalid_client', async () => {
    const res = await request(t.app).post('/api/oauth/token').type('form').send({ grant_type: 'authorization_code' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });

  test('Basic and client_secret in the body at once -> invalid_request', async () => {
    const { client } = await setup();
    const res = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: 'x', client_secret: client.clientSecret });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test('inactive client -> invalid_client', async () => {
    const { agent, client } = await setup();
    const { code, verifier } = await obtainCode(agent, client);
    await t.db('oauth_clients').where({ client_id: client.clientId }).update({ is_active: false });
    const res = await exchangeCode(t, client, { code, verifier });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });

  test('Basic credentials are form-urlencoded before base64: special characters in id and secret', async () => {
    const secret = 'p@ss:w%rd +&=/é';
    const client = await insertClient(t.db, {
      clientId: 'client:with space+plus',
      name: 'Special',
      secretHash: sha256Hex(secret),
      redirectUris: ['https://special.test/cb'],
      scopes: ['openid'],
      now: t.clock.now(),
    });
    const testClient = { ...client, clientSecret: secret };
    const { code, verifier } = await codeFor(testClient);
    const res = await exchangeCode(t, testClient, { code, verifier });
    expect(res.status).toBe(200);
    const raw = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', `Basic ${Buffer.from(`${client.clientId}:${secret}`).toString('base64')}`)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: res.body.refresh_token });
    // "+" decodes to a space and "%rd" is not an escape: the unencoded form is not the same credential.
    expect(raw.status).toBe(401);
  });

  test('unsupported grant type -> unsupported_grant_type', async () => {
    const { client } = await setup();
    const res = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'password', username: 'a', password: 'b' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unsupported_grant_type');
  });

  test('a repeated form parameter -> invalid_request', async () => {
    const { client } = await setup();
    const res = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send('grant_type=refresh_token&refresh_token=a&refresh_token=b');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});

describe('POST /api/oauth/token > refresh_token', () => {
  const refresh = (client: TestClient, refreshToken: string) =>
    request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: refreshToken });

  test('rotates: new pair with the same scope, old refresh token stops working', async () => {
    const { agent, client } = await setup();
    const tokens = await issueOAuthTokens(t, agent, client, { scope: 'openid email' });
    const res = await refresh(client, tokens.refresh_token);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid email' });
    expect(res.body.refresh_token).not.toBe(tokens.refresh_token);
    expect((await me(res.body.access_token)).status).toBe(200);
  });

  test('refresh reuse after the grace window -> invalid_grant and the whole session is revoked', async () => {
    const { agent, client } = await setup();
    const tokens = await issueOAuthTokens(t, agent, client);
    const second = await refresh(client, tokens.refresh_token);
    expect(second.status).toBe(200);
    t.clock.advance(t.config.refreshReuseGraceSeconds + 1);
    const reuse = await refresh(client, tokens.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    expect((await me(second.body.access_token)).status).toBe(401);
    expect((await refresh(client, second.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  test('refresh token of another client -> invalid_grant and it stays valid for its own client', async () => {
    const { agent, client } = await setup();
    const other = await makeClient(t);
    const tokens = await issueOAuthTokens(t, agent, client);
    const res = await refresh(other, tokens.refresh_token);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
  });

  test('a first-party refresh token cannot be used at the token endpoint', async () => {
    const user = await makeUser(t);
    const { refreshToken } = await signIn(t, user);
    const client = await makeClient(t);
    const res = await refresh(client, refreshToken);
    expect(res.body.error).toBe('invalid_grant');
  });

  test('updates the connected app last_used_at', async () => {
    const { user, agent, client } = await setup();
    const tokens = await issueOAuthTokens(t, agent, client);
    await t.db('oauth_grants').where({ user_id: user.id }).update({ last_used_at: null });
    await refresh(client, tokens.refresh_token);
    const grant = await t.db('oauth_grants').where({ user_id: user.id, client_id: client.clientId }).first();
    expect(grant.last_used_at).not.toBeNull();
    // A retry within the grace window (the rotation's transactional path) updates it too.
    await t.db('oauth_grants').where({ user_id: user.id }).update({ last_used_at: null });
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
    const retried = await t.db('oauth_grants').where({ user_id: user.id, client_id: client.clientId }).first();
    expect(retried.last_used_at).not.toBeNull();
  });

  test('records the connected app last use at most once a minute, so that one user refreshing on many devices does not queue on it', async () => {
    const { agent, client } = await setup();
    // What the person sees: the connected app's last use in their own list of apps.
    const lastUsed = async () => {
      const apps = await agent.get('/api/auth/apps').expect(200);
      const listed = apps.body.apps as Array<{ client_id: string; last_used_at: string | null }>;
      const app = listed.find((a) => a.client_id === client.clientId);
      return Date.parse(app?.last_used_at ?? '');
    };
    const first = (await issueOAuthTokens(t, agent, client)).refresh_token;
    const atExchange = await lastUsed();
    // Recorded at the exchange: within seconds of it (10 s: requests on a loaded machine), far from the minute it spaces.
    expect(Math.abs(atExchange - t.clock.now().getTime())).toBeLessThan(10_000);

    // 30 s later: the refresh rotates (its one statement), the recorded use stays as it was.
    t.clock.advance(30);
    const res = await refresh(client, first);
    expect(res.status).toBe(200);
    expect(await lastUsed()).toBe(atExchange);
    // The same token again within the grace window (the rotation's transactional path): answered, recorded use kept.
    expect((await refresh(client, first)).status).toBe(200);
    expect(await lastUsed()).toBe(atExchange);

    // Over a minute after the recorded use: the next rotation of the same chain records it.
    t.clock.advance(31);
    expect((await refresh(client, res.body.refresh_token)).status).toBe(200);
    expect((await lastUsed()) - atExchange).toBeGreaterThanOrEqual(61_000);
  });

  test('a garbage refresh token -> invalid_grant', async () => {
    const { client } = await setup();
    const res = await refresh(client, 'not-a-jwt');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
  });
});

/**
 * Issue 33's 5xx soak: a database that refuses work for lack of time or resources under load (an operator's
 * lock_timeout or statement_timeout, out of memory, too many connections) is a temporary condition, answered 503
 * with Retry-After on both dialects, and the refused refresh burns nothing. Forced here by making the rotation's one
 * statement fail with each class.
 */
describe('database refusals under load', () => {
  test.each([
    ['55P03', 'lock_not_available (lock_timeout)'],
    ['57014', 'query_canceled (statement_timeout)'],
    ['53200', 'out_of_memory'],
    ['53300', 'too_many_connections'],
  ])('%s %s: 503 temporarily_unavailable with Retry-After, and the refresh token stays usable', async (code, what) => {
    const { agent, client } = await setup();
    const tokens = await issueOAuthTokens(t, agent, client);
    const spy = jest.spyOn(refreshRepo, 'rotateLiveRefreshToken').mockRejectedValue(Object.assign(new Error(what), { code }));
    try {
      const oauth = await request(t.app)
        .post('/api/oauth/token')
        .set('Authorization', basicAuth(client.clientId, client.clientSecret))
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      expect(oauth.status).toBe(503);
      expect(oauth.body.error).toBe('temporarily_unavailable');
      expect(oauth.headers['retry-after']).toBe('5');
    } finally {
      spy.mockRestore();
    }
    const again = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(again.status).toBe(200);
  });

  test('the first-party refresh maps the same refusal to 503 service_unavailable with Retry-After', async () => {
    const user = await makeUser(t);
    const { refreshToken } = await signIn(t, user);
    const spy = jest
      .spyOn(refreshRepo, 'rotateLiveRefreshToken')
      .mockRejectedValue(Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' }));
    try {
      const res = await request(t.app).post('/api/auth/refresh-token').send({ refreshToken });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('service_unavailable');
      expect(res.headers['retry-after']).toBe('5');
    } finally {
      spy.mockRestore();
    }
    await request(t.app).post('/api/auth/refresh-token').send({ refreshToken }).expect(200);
  });
});
