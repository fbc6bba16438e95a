import jwt from 'jsonwebtoken';
import request from 'supertest';
import type { Server } from 'node:http';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { authorizeParams, authorizePath, basicAuth, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §3/§8: every single-use or rotating thing, 30 requests at once: exactly the contracted outcome, no 5xx.
 * One listening server per file, so the 30 requests really overlap (supertest would start a server per request).
 */
const N = 30;
let t: TestApp;
let server: Server;
beforeAll(async () => {
  t = await createTestApp({ poolMax: 20 });
  server = t.app.listen(0, '127.0.0.1');
});
afterAll(async () => {
  server.close();
  await t.close();
});
const api = () => request(server);

function tally(statuses: number[]): Record<number, number> {
  return statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
}

describe(`${N} concurrent uses of one single-use or rotating thing`, () => {
  test('authorization code: exactly one exchange succeeds, the others invalid_grant', async () => {
    const client = await makeClient(t);
    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier, redirectUri } = await obtainCode(agent, client);
    const results = await Promise.all(
      Array.from({ length: N }, () =>
        api()
          .post('/api/oauth/token')
          .set('Authorization', basicAuth(client.clientId, client.clientSecret))
          .type('form')
          .send({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri }),
      ),
    );
    expect(tally(results.map((r) => r.status))).toEqual({ 200: 1, 400: N - 1 });
    expect(results.filter((r) => r.status === 400).every((r) => r.body.error === 'invalid_grant')).toBe(true);
  });

  test('first-party refresh token: all get the one successor (grace window), the session survives', async () => {
    const { refreshToken } = await signIn(t, await makeUser(t));
    const results = await Promise.all(Array.from({ length: N }, () => api().post('/api/auth/refresh-token').send({ refreshToken })));
    expect(tally(results.map((r) => r.status))).toEqual({ 200: N });
    expect(new Set(results.map((r) => (jwt.decode(r.body.refreshToken) as { tokenId: string }).tokenId)).size).toBe(1);
    await api()
      .get('/api/auth/me')
      .set('Authorization', `Bearer ${results[N - 1]!.body.accessToken}`)
      .expect(200);
  });

  test('OAuth refresh token under REFRESH_REUSE_GRACE_S=0: exactly one rotation wins, the rest revoke the session', async () => {
    const strict = await createTestApp({ env: { REFRESH_REUSE_GRACE_S: '0' } });
    const strictServer = strict.app.listen(0, '127.0.0.1');
    try {
      const client = await makeClient(strict);
      const { agent } = await signIn(strict, await makeUser(strict));
      const { code, verifier, redirectUri } = await obtainCode(agent, client);
      const tokens = (
        await request(strictServer)
          .post('/api/oauth/token')
          .set('Authorization', basicAuth(client.clientId, client.clientSecret))
          .type('form')
          .send({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri })
      ).body as { refresh_token: string; access_token: string };
      const results = await Promise.all(
        Array.from({ length: N }, () =>
          request(strictServer)
            .post('/api/oauth/token')
            .set('Authorization', basicAuth(client.clientId, client.clientSecret))
            .type('form')
            .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
        ),
      );
      expect(tally(results.map((r) => r.status))).toEqual({ 200: 1, 400: N - 1 });
      const { sid } = jwt.decode(tokens.access_token) as { sid: string };
      expect((await strict.db('sessions').where({ id: sid }).first()).revoked_at).not.toBeNull();
    } finally {
      strictServer.close();
      await strict.close();
    }
  });

  test('login token: exactly one resolve succeeds', async () => {
    const { login_token } = (await api().post('/api/auth/login-request').send({ app: 'portal', path: '/x' }).expect(200)).body;
    const results = await Promise.all(Array.from({ length: N }, () => api().post('/api/auth/login-resolve').send({ login_token })));
    expect(tally(results.map((r) => r.status))).toEqual({ 200: 1, 400: N - 1 });
  });

  test("set-password link: exactly one password is set, and it is the winner's", async () => {
    const user = await makeUser(t);
    await api().post('/api/auth/forgot-password').send({ email: user.email }).expect(202);
    const mail = [...t.mails].reverse().find((m) => m.to === user.email)!;
    const token = /set-password\?token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!;
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        api()
          .post('/api/auth/set-password')
          .send({ token, password: `racing-pass-${i}` }),
      ),
    );
    expect(tally(results.map((r) => r.status))).toEqual({ 200: 1, 400: N - 1 });
    const winner = results.findIndex((r) => r.status === 200);
    await api()
      .post('/api/auth/login')
      .send({ email: user.email, password: `racing-pass-${winner}` })
      .expect(200);
  });

  test('verification link confirmed by the signed-in owner: exactly one confirmation', async () => {
    const user = await makeUser(t, { emailVerified: false });
    const { accessToken } = await signIn(t, user);
    await api().post('/api/auth/verify-email/resend').send({ email: user.email }).expect(202);
    const mail = [...t.mails].reverse().find((m) => m.to === user.email)!;
    const token = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!;
    const results = await Promise.all(
      Array.from({ length: N }, () =>
        api().post('/api/auth/verify-email/confirm').set('Authorization', `Bearer ${accessToken}`).send({ token }),
      ),
    );
    const statuses = tally(results.map((r) => r.status));
    expect(statuses[200]).toBe(1);
    expect(results.every((r) => r.status < 500)).toBe(true);
    expect((await t.db('users').where({ id: user.id }).first()).email_verified).toBe(true);
  });

  test('consent approve: exactly one code is issued, the others 404', async () => {
    const client = await makeClient(t);
    const { agent, accessToken } = await signIn(t, await makeUser(t));
    const res = await agent.get(authorizePath(authorizeParams(client).params)).expect(302);
    const requestId = new URL(res.headers.location).searchParams.get('request_id')!;
    const results = await Promise.all(
      Array.from({ length: N }, () =>
        api().post('/api/oauth/authorize/approve').set('Authorization', `Bearer ${accessToken}`).send({ request_id: requestId }),
      ),
    );
    expect(tally(results.map((r) => r.status))).toEqual({ 200: 1, 404: N - 1 });
    expect(await t.db('oauth_codes').where({ client_id: client.clientId })).toHaveLength(1);
  });
});
