import request from 'supertest';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { basicAuth, issueOAuthTokens } from '../helpers/oauth';
import { refuseAuditRows } from '../helpers/audit';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { SoftAuthenticator } from '../helpers/webauthn';

/**
 * CONTRACT §11: audit rows are written in the transaction of the change they record (the outbox webhooks read): a
 * change commits with its row or not at all. And the trail is complete: consent grants, failed passkey sign-ins,
 * failed client authentication at token / revoke / introspect and RFC 7009 revocations each leave a row.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);

describe('a change commits with its audit row or not at all', () => {
  test('when its row cannot be written, a session revocation does not happen', async () => {
    const user = await makeUser(t);
    const laptop = await signIn(t, user);
    const phone = await signIn(t, user);
    const phoneSession = (await api().get('/api/auth/sessions').set('Authorization', `Bearer ${phone.accessToken}`)).body.sessions.find(
      (s: { current: boolean }) => s.current,
    ).id;
    const allow = await refuseAuditRows(t, 'auth.session.revoked', user.id);
    try {
      const res = await laptop.agent.delete(`/api/auth/sessions/${phoneSession}`);
      expect(res.status).toBeGreaterThanOrEqual(500);
    } finally {
      await allow();
    }
    expect((await t.db('sessions').where({ id: phoneSession }).first()).revoked_at).toBeNull();
    expect((await phone.agent.get('/api/auth/me')).status).toBe(200);
    // With the trail writable again the same request works, and its row is there as soon as it answered.
    expect((await laptop.agent.delete(`/api/auth/sessions/${phoneSession}`)).status).toBe(204);
    expect(await t.db('audit_events').where({ type: 'auth.session.revoked', subject_id: user.id })).toHaveLength(1);
  });

  test('when its row cannot be written, an admin edit of a user does not happen', async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const user = await makeUser(t, { firstName: 'Before' });
    const allow = await refuseAuditRows(t, 'user.changed', user.id);
    try {
      const res = await api().put(`/api/users/${user.id}`).set('Authorization', admin.bearer).send({ first_name: 'After' });
      expect(res.status).toBeGreaterThanOrEqual(500);
    } finally {
      await allow();
    }
    expect((await t.db('users').where({ id: user.id }).first()).first_name).toBe('Before');
  });
});

describe('the trail is complete', () => {
  test('a consent grant names the user and the client', async () => {
    const { user, agent } = await makeSignedInUser(t);
    const client = await makeClient(t);
    await issueOAuthTokens(t, agent, client, { scope: 'openid email' });
    const row = await t.db('audit_events').where({ type: 'oauth.consent.granted', subject_id: user.id }).first();
    expect(row).toMatchObject({ actor_id: user.id, client_id: client.clientId });
    expect(row.detail.scopes).toEqual(['openid', 'email']);
  });

  test('an RFC 7009 revocation names the user whose session ended', async () => {
    const { user, agent } = await makeSignedInUser(t);
    const client = await makeClient(t);
    const tokens = await issueOAuthTokens(t, agent, client);
    const res = await api()
      .post('/api/oauth/revoke')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ token: tokens.refresh_token });
    expect(res.status).toBe(200);
    const row = await t.db('audit_events').where({ type: 'oauth.token.revoked', subject_id: user.id }).first();
    expect(row).toMatchObject({ client_id: client.clientId });
    expect(row.detail).toMatchObject({ kind: 'refresh_token' });
    // Revoking it again ends nothing: no second row.
    await api()
      .post('/api/oauth/revoke')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ token: tokens.refresh_token });
    expect(await t.db('audit_events').where({ type: 'oauth.token.revoked', subject_id: user.id })).toHaveLength(1);
  });

  test('failed client authentication at token, revoke and introspect, naming the client when it exists', async () => {
    const client = await makeClient(t);
    const wrong = basicAuth(client.clientId, 'not-the-secret');
    expect(
      (
        await api()
          .post('/api/oauth/token')
          .set('Authorization', wrong)
          .type('form')
          .send({ grant_type: 'refresh_token', refresh_token: 'x' })
      ).status,
    ).toBe(401);
    expect((await api().post('/api/oauth/revoke').set('Authorization', wrong).type('form').send({ token: 'x' })).status).toBe(401);
    expect((await api().post('/api/oauth/introspect').set('Authorization', wrong).type('form').send({ token: 'x' })).status).toBe(401);
    const rows = await t.db('audit_events').where({ type: 'oauth.client.auth_failed', subject_id: client.clientId }).orderBy('id');
    expect(rows.map((r) => r.detail)).toEqual([
      { endpoint: 'token', reason: 'wrong_secret' },
      { endpoint: 'revoke', reason: 'wrong_secret' },
      { endpoint: 'introspect', reason: 'wrong_secret' },
    ]);
    await api().post('/api/oauth/token').set('Authorization', basicAuth('no-such-client', 'x')).type('form').send({
      grant_type: 'refresh_token',
      refresh_token: 'x',
    });
    const unknown = await t.db('audit_events').where({ type: 'oauth.client.auth_failed' }).whereNull('subject_id');
    expect(unknown.map((r) => r.detail)).toContainEqual({ endpoint: 'token', reason: 'unknown_client' });
  });

  test('a failed passkey sign-in names the account of a known credential', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const authenticator = new SoftAuthenticator('http://sso.test');
    const options = await agent.post('/api/auth/passkeys/register/options');
    await agent
      .post('/api/auth/passkeys/register')
      .send({ response: authenticator.create(options.body) })
      .expect(201);
    const login = await api().post('/api/auth/passkeys/login/options');
    const res = await api()
      .post('/api/auth/passkeys/login')
      .send({ response: authenticator.get(login.body, { origin: 'https://evil.test' }) });
    expect(res.status).toBe(401);
    const row = await t.db('audit_events').where({ type: 'auth.login.failed', subject_id: user.id }).first();
    expect(row.detail).toEqual({ method: 'passkey', reason: 'assertion_rejected' });
  });
});
