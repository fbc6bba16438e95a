import jwt from 'jsonwebtoken';
import request from 'supertest';
import { createApp } from '../../src/app';
import { createDb } from '../../src/db';
import { createServiceContext } from '../../src/create-context';
import type { SecurityEvent } from '../../src/services/events';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { authorizeParams, authorizePath, basicAuth, issueOAuthTokens } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
const events: SecurityEvent[] = [];

beforeAll(async () => {
  t = await createTestApp();
  const bus = t.ctx.events;
  t.ctx.events = {
    record: async (db, e, origin) => {
      events.push(e);
      await bus.record(db, e, origin);
    },
    idle: () => bus.idle(),
  };
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);
const tokenIdOf = (refreshToken: string) => (jwt.decode(refreshToken) as { tokenId: string }).tokenId;
const sidOf = (token: string) => (jwt.decode(token) as { sid: string }).sid;
const firstPartyRefresh = (refreshToken: string) => api().post('/api/auth/refresh-token').send({ refreshToken });
async function sessionRevoked(sid: string): Promise<boolean> {
  return (await t.db('sessions').where({ id: sid }).first()).revoked_at !== null;
}
function cookieOf(res: request.Response, name: string): string | undefined {
  const cookies = (res.headers['set-cookie'] as unknown as string[] | undefined) ?? [];
  return cookies
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith(`${name}=`))
    ?.slice(name.length + 1);
}

describe('POST /api/auth/refresh-token > grace window (CONTRACT §8, REFRESH_REUSE_GRACE_S=10)', () => {
  test('an SPA firing 5 parallel 401-refreshes: all get working tokens of one chain, the session survives', async () => {
    const { refreshToken } = await signIn(t, await makeUser(t));
    const results = await Promise.all(Array.from({ length: 5 }, () => firstPartyRefresh(refreshToken)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(results.map((r) => tokenIdOf(r.body.refreshToken))).size).toBe(1);
    for (const r of results) await api().get('/api/auth/me').set('Authorization', `Bearer ${r.body.accessToken}`).expect(200);
    // Whichever copy of the successor the SPA keeps, the chain goes on.
    const next = await firstPartyRefresh(results[3]!.body.refreshToken).expect(200);
    expect(tokenIdOf(next.body.refreshToken)).not.toBe(tokenIdOf(results[0]!.body.refreshToken));
    expect(await sessionRevoked(sidOf(refreshToken))).toBe(false);
  });

  test('a retried request on a flaky network (same token 5 s later, successor unused) gets the same successor', async () => {
    const { refreshToken } = await signIn(t, await makeUser(t));
    const lost = await firstPartyRefresh(refreshToken).expect(200);
    // Well inside the 10 s: the clock is real time plus an offset, and a slow request adds its own time.
    t.clock.advance(5);
    const retry = await firstPartyRefresh(refreshToken).expect(200);
    expect(tokenIdOf(retry.body.refreshToken)).toBe(tokenIdOf(lost.body.refreshToken));
    // The re-issued JWT expires with the successor's row, not later.
    expect((jwt.decode(retry.body.refreshToken) as { exp: number }).exp).toBeLessThanOrEqual(
      (jwt.decode(lost.body.refreshToken) as { exp: number }).exp,
    );
    await firstPartyRefresh(retry.body.refreshToken).expect(200);
  });

  test('reuse after the successor was used is theft: 401, session revoked, reuse_detected event', async () => {
    const { refreshToken, accessToken } = await signIn(t, await makeUser(t));
    const first = await firstPartyRefresh(refreshToken).expect(200);
    await firstPartyRefresh(first.body.refreshToken).expect(200);
    const stolen = await firstPartyRefresh(refreshToken);
    expect(stolen.status).toBe(401);
    expect(await sessionRevoked(sidOf(accessToken))).toBe(true);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'auth.refresh.reuse_detected', detail: { session_id: sidOf(accessToken) } }),
    );
    expect(JSON.stringify(events)).not.toContain(refreshToken);
  });

  test('reuse outside the window (11 s) is theft: 401 and the session is revoked', async () => {
    const { refreshToken, accessToken } = await signIn(t, await makeUser(t));
    await firstPartyRefresh(refreshToken).expect(200);
    t.clock.advance(11);
    expect((await firstPartyRefresh(refreshToken)).status).toBe(401);
    await api().get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).expect(401);
  });

  test('a burst spread over two server instances (shared database only) still yields one successor', async () => {
    const db2 = createDb(t.config, { poolMax: 20 });
    const ctx2 = createServiceContext(t.config, { db: db2, clock: t.clock, mailer: t.ctx.mailer, logger: t.ctx.logger });
    const app2 = createApp({ ctx: ctx2 });
    try {
      const { refreshToken } = await signIn(t, await makeUser(t));
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          request(i % 2 ? app2 : t.app)
            .post('/api/auth/refresh-token')
            .send({ refreshToken }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
      expect(new Set(results.map((r) => tokenIdOf(r.body.refreshToken))).size).toBe(1);
      expect(await sessionRevoked(sidOf(refreshToken))).toBe(false);
      const rows = await t.db('refresh_tokens').where({ session_id: sidOf(refreshToken) });
      expect(rows).toHaveLength(2);
    } finally {
      await ctx2.passwords.close();
      await db2.destroy();
    }
  });
});

describe('REFRESH_REUSE_GRACE_S=0 is strict rotation', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await createTestApp({ env: { REFRESH_REUSE_GRACE_S: '0' } });
  });
  afterAll(async () => {
    await strict.close();
  });

  test('a second presentation, even at once, revokes the session', async () => {
    const { refreshToken, accessToken } = await signIn(strict, await makeUser(strict));
    await request(strict.app).post('/api/auth/refresh-token').send({ refreshToken }).expect(200);
    await request(strict.app).post('/api/auth/refresh-token').send({ refreshToken }).expect(401);
    await request(strict.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`).expect(401);
  });

  test("a concurrent presentation whose clock reading came before the winner's is reuse too, not a retry inside a zero window", async () => {
    const { refreshToken, accessToken } = await signIn(strict, await makeUser(strict));
    await request(strict.app).post('/api/auth/refresh-token').send({ refreshToken }).expect(200);
    // As when 30 requests race: the winner read the clock after this loser did, so its used_at is later than the
    // loser's `now` (found by test/e2e/concurrency.test.ts, two 200s out of 30 in one run).
    await strict
      .db('refresh_tokens')
      .where({ id: tokenIdOf(refreshToken) })
      .update({ used_at: new Date(Date.now() + 5000) });
    await request(strict.app).post('/api/auth/refresh-token').send({ refreshToken }).expect(401);
    expect(
      await strict
        .db('sessions')
        .where({ id: sidOf(accessToken) })
        .first(),
    ).toMatchObject({ revoked_at: expect.any(Date) });
  });
});

describe('POST /api/oauth/token grant_type=refresh_token > grace window', () => {
  test('30 concurrent refreshes of one token: all 200 with one successor; the chain and the session live on', async () => {
    const client = await makeClient(t);
    const { agent } = await signIn(t, await makeUser(t));
    const tokens = await issueOAuthTokens(t, agent, client);
    const results = await Promise.all(
      Array.from({ length: 30 }, () =>
        api()
          .post('/api/oauth/token')
          .set('Authorization', basicAuth(client.clientId, client.clientSecret))
          .type('form')
          .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
    expect(new Set(results.map((r) => tokenIdOf(r.body.refresh_token))).size).toBe(1);
    expect(results.every((r) => r.body.scope === tokens.scope)).toBe(true);
    await api().get('/api/oauth/userinfo').set('Authorization', `Bearer ${results[29]!.body.access_token}`).expect(200);
    const next = await api()
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: results[0]!.body.refresh_token });
    expect(next.status).toBe(200);
    // Once the successor is used, the original is theft.
    const replay = await api()
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(replay.body.error).toBe('invalid_grant');
    expect(await sessionRevoked(sidOf(tokens.access_token))).toBe(true);
  });
});

describe('silent cookie refresh (accessToken cookie expired, refreshToken cookie valid)', () => {
  async function refreshCookieOnly() {
    const { refreshToken, accessToken } = await signIn(t, await makeUser(t));
    return { cookie: `refreshToken=${refreshToken}`, sid: sidOf(accessToken), refreshToken };
  }

  test('two tabs and a double click: 6 parallel page loads of /login all stay signed in, one successor', async () => {
    const { cookie, sid } = await refreshCookieOnly();
    const results = await Promise.all(Array.from({ length: 6 }, () => api().get('/login').set('Cookie', cookie)));
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.text).toMatch(/Sign out/i);
    }
    const successors = new Set(results.map((r) => tokenIdOf(decodeURIComponent(cookieOf(r, 'refreshToken')!))));
    expect(successors.size).toBe(1);
    expect(await sessionRevoked(sid)).toBe(false);
  });

  test('/api/oauth/authorize and /consent in parallel with the same cookie: signed in everywhere, session alive', async () => {
    const client = await makeClient(t);
    const { cookie, sid } = await refreshCookieOnly();
    const results = await Promise.all([
      ...Array.from({ length: 3 }, () =>
        api()
          .get(authorizePath(authorizeParams(client).params))
          .set('Cookie', cookie),
      ),
      ...Array.from({ length: 3 }, () => api().get('/consent?request_id=00000000-0000-4000-8000-000000000000').set('Cookie', cookie)),
    ]);
    for (const r of results.slice(0, 3)) {
      expect(r.status).toBe(302);
      expect(r.headers.location).toMatch(/\/consent\?request_id=/);
    }
    // Signed in: the unknown request is "expired" (404), not a redirect to the sign-in page.
    for (const r of results.slice(3)) expect(r.status).toBe(404);
    expect(await sessionRevoked(sid)).toBe(false);
  });

  test('a stale cookie presented after its successor was used signs the browser out (theft)', async () => {
    const { cookie, sid, refreshToken } = await refreshCookieOnly();
    const first = await api().get('/login').set('Cookie', cookie).expect(200);
    const successor = decodeURIComponent(cookieOf(first, 'refreshToken')!);
    await firstPartyRefresh(successor).expect(200);
    const stale = await api().get('/login').set('Cookie', `refreshToken=${refreshToken}`);
    expect(stale.text).not.toMatch(/Sign out/i);
    expect(await sessionRevoked(sid)).toBe(true);
  });
});

describe('absolute session lifetime (SESSION_MAX_AGE_DAYS, CONTRACT §8)', () => {
  let short: TestApp;
  beforeAll(async () => {
    short = await createTestApp({ env: { SESSION_MAX_AGE_DAYS: '2' } });
  });
  afterAll(async () => {
    await short.close();
  });

  test('rotation never extends a session past its end; after it, refresh is 401', async () => {
    const signedIn = await signIn(short, await makeUser(short));
    const end = (jwt.decode(signedIn.accessToken) as { iat: number }).iat + 2 * 86400;
    expect((jwt.decode(signedIn.refreshToken) as { exp: number }).exp).toBeLessThanOrEqual(end);
    let refreshToken = signedIn.refreshToken;
    for (let day = 0; day < 2; day++) {
      short.clock.advance(23 * 3600);
      const res = await request(short.app).post('/api/auth/refresh-token').send({ refreshToken }).expect(200);
      refreshToken = res.body.refreshToken;
      expect((jwt.decode(refreshToken) as { exp: number }).exp).toBeLessThanOrEqual(end);
      const session = await short
        .db('sessions')
        .where({ id: sidOf(refreshToken) })
        .first();
      expect(Math.floor(new Date(session.expires_at).getTime() / 1000)).toBeLessThanOrEqual(end);
    }
    short.clock.advance(3 * 3600);
    await request(short.app).post('/api/auth/refresh-token').send({ refreshToken }).expect(401);
  });

  test('the default (90 days) leaves the 30-day refresh lifetime as it is', async () => {
    const { refreshToken } = await signIn(t, await makeUser(t));
    const { iat, exp } = jwt.decode(refreshToken) as { iat: number; exp: number };
    expect(exp - iat).toBe(30 * 86400);
  });
});
