import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** One user signed in twice: two agents (think laptop and phone), each with its own cookies and session. */
async function twoAgents() {
  const user = await makeUser(t);
  const laptop = await signIn(t, user);
  const phone = await signIn(t, user);
  const laptopSid = t.ctx.jwt.verifyAccess(laptop.accessToken, t.clock.now())!.sid;
  const phoneSid = t.ctx.jwt.verifyAccess(phone.accessToken, t.clock.now())!.sid;
  return { user, laptop, phone, laptopSid, phoneSid };
}

describe('GET /api/auth/sessions', () => {
  test('lists only the caller’s active sessions, marks the current one, client_id null for first-party', async () => {
    const { user, laptop, laptopSid, phoneSid } = await twoAgents();
    const other = await makeUser(t);
    await signIn(t, other);
    const revoked = await signIn(t, user);
    await revoked.agent.post('/api/auth/logout');

    const res = await laptop.agent.get('/api/auth/sessions');
    expect(res.status).toBe(200);
    const ids = res.body.sessions.map((s: { id: string }) => s.id).sort();
    expect(ids).toEqual([laptopSid, phoneSid].sort());
    const current = res.body.sessions.find((s: { id: string }) => s.id === laptopSid);
    expect(Object.keys(current).sort()).toEqual(
      ['client_id', 'created_at', 'current', 'expires_at', 'id', 'ip', 'last_used_at', 'user_agent'].sort(),
    );
    expect(current).toMatchObject({ current: true, client_id: null });
    expect(new Date(current.expires_at).getTime()).toBeGreaterThan(Date.now());
    expect(res.body.sessions.find((s: { id: string }) => s.id === phoneSid).current).toBe(false);
  });

  test('an OAuth session shows its client_id', async () => {
    const user = await makeUser(t);
    const me = await signIn(t, user);
    const client = await makeClient(t);
    const sid = randomUUID();
    const now = t.clock.now();
    await t.db('sessions').insert({
      id: sid,
      user_id: user.id,
      client_id: client.clientId,
      created_at: now,
      last_used_at: now,
      expires_at: new Date(now.getTime() + 3600_000),
    });
    const res = await request(t.app).get('/api/auth/sessions').set('Authorization', `Bearer ${me.accessToken}`);
    expect(res.body.sessions.find((s: { id: string }) => s.id === sid).client_id).toBe(client.clientId);
  });

  test('without authentication -> 401', async () => {
    const res = await request(t.app).get('/api/auth/sessions');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthorized');
  });
});

describe('DELETE /api/auth/sessions/:sessionId', () => {
  test('revokes the other agent’s session: its token is refused at once', async () => {
    const { laptop, phone, phoneSid } = await twoAgents();
    expect((await phone.agent.get('/api/auth/me')).status).toBe(200);
    const res = await laptop.agent.delete(`/api/auth/sessions/${phoneSid}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await phone.agent.get('/api/auth/me')).status).toBe(401);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${phone.accessToken}`)).status).toBe(401);
    expect((await request(t.app).post('/api/auth/refresh-token').send({ refreshToken: phone.refreshToken })).status).toBe(401);
    expect((await laptop.agent.get('/api/auth/me')).status).toBe(200);
    expect((await t.db('sessions').where({ id: phoneSid }).first()).revoked_at).not.toBeNull();
  });

  test('another user’s session -> 404 and it stays active', async () => {
    const { laptop } = await twoAgents();
    const stranger = await makeUser(t);
    const theirs = await signIn(t, stranger);
    const theirSid = t.ctx.jwt.verifyAccess(theirs.accessToken, t.clock.now())!.sid;
    const res = await laptop.agent.delete(`/api/auth/sessions/${theirSid}`);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
    expect((await theirs.agent.get('/api/auth/me')).status).toBe(200);
  });

  test('malformed, unknown and already revoked ids -> 404', async () => {
    const { laptop, phone, phoneSid } = await twoAgents();
    for (const id of ['not-a-uuid', '1', "'; drop table sessions; --", randomUUID()]) {
      const res = await laptop.agent.delete(`/api/auth/sessions/${encodeURIComponent(id)}`);
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
    }
    await phone.agent.post('/api/auth/logout');
    expect((await laptop.agent.delete(`/api/auth/sessions/${phoneSid}`)).status).toBe(404);
  });

  test('revoking the current session signs this agent out and clears its cookies', async () => {
    const { laptop, laptopSid } = await twoAgents();
    const res = await laptop.agent.delete(`/api/auth/sessions/${laptopSid}`);
    expect(res.status).toBe(204);
    const cookies = (res.headers['set-cookie'] as unknown as string[]).join('\n');
    expect(cookies).toMatch(/accessToken=;/);
    expect(cookies).toMatch(/refreshToken=;/);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${laptop.accessToken}`)).status).toBe(401);
  });
});

describe('POST /api/auth/sessions/revoke-others', () => {
  test('revokes every other session of the caller only and reports how many', async () => {
    const { user, laptop, phone } = await twoAgents();
    const tablet = await signIn(t, user);
    const stranger = await signIn(t, await makeUser(t));
    const res = await laptop.agent.post('/api/auth/sessions/revoke-others');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ revoked: 2 });
    expect((await phone.agent.get('/api/auth/me')).status).toBe(401);
    expect((await tablet.agent.get('/api/auth/me')).status).toBe(401);
    expect((await laptop.agent.get('/api/auth/me')).status).toBe(200);
    expect((await stranger.agent.get('/api/auth/me')).status).toBe(200);
    expect((await laptop.agent.post('/api/auth/sessions/revoke-others')).body).toEqual({ revoked: 0 });
    expect((await laptop.agent.get('/api/auth/sessions')).body.sessions).toHaveLength(1);
  });
});

describe('POST /api/auth/change-password', () => {
  test('changes the password, revokes the other agent and keeps the current one', async () => {
    const { user, laptop, phone } = await twoAgents();
    const res = await laptop.agent
      .post('/api/auth/change-password')
      .send({ current_password: user.password, new_password: 'changed-secret-1' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect((await phone.agent.get('/api/auth/me')).status).toBe(401);
    expect((await laptop.agent.get('/api/auth/me')).status).toBe(200);
    expect((await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password })).status).toBe(401);
    expect((await request(t.app).post('/api/auth/login').send({ email: user.email, password: 'changed-secret-1' })).status).toBe(200);
    const row = await t.db('users').where({ id: user.id }).first();
    expect(row.password_hash).not.toContain('changed-secret-1');
  });

  test('wrong current password -> 403 reauthentication_failed (CONTRACT §11: not a 401), audited, nothing changes', async () => {
    const { user, laptop, phone } = await twoAgents();
    const res = await laptop.agent
      .post('/api/auth/change-password')
      .send({ current_password: 'wrong-one', new_password: 'changed-secret-1' });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('reauthentication_failed');
    // The signed-in caller stays signed in: a 401 would have made an SPA refresh and retry.
    expect((await laptop.agent.get('/api/auth/me')).status).toBe(200);
    const audit = await t.db('audit_events').where({ type: 'auth.reauthentication.failed', subject_id: user.id });
    expect(audit).toHaveLength(1);
    expect(audit[0].detail).toEqual({ method: 'password' });
    expect((await phone.agent.get('/api/auth/me')).status).toBe(200);
    expect((await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password })).status).toBe(200);
  });

  test('the new password follows the registration rule: 6 characters to 72 bytes', async () => {
    const { user, laptop } = await twoAgents();
    for (const new_password of ['12345', 'é'.repeat(37), undefined]) {
      const res = await laptop.agent.post('/api/auth/change-password').send({ current_password: user.password, new_password });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
      expect(res.body.details[0].path).toBe('new_password');
    }
    const ok = await laptop.agent.post('/api/auth/change-password').send({ current_password: user.password, new_password: 'é'.repeat(36) });
    expect(ok.status).toBe(200);
  });

  test('wrong current passwords count toward the login throttle (429 after 10)', async () => {
    const { user, laptop } = await twoAgents();
    for (let i = 0; i < 10; i++) {
      const res = await laptop.agent
        .post('/api/auth/change-password')
        .send({ current_password: `guess-${i}`, new_password: 'changed-secret-1' });
      expect(res.status).toBe(403);
    }
    const locked = await laptop.agent
      .post('/api/auth/change-password')
      .send({ current_password: user.password, new_password: 'changed-secret-1' });
    expect(locked.status).toBe(429);
    expect(locked.body.error).toBe('too_many_attempts');
    expect(locked.headers['retry-after']).toBeDefined();
  });

  test('without authentication -> 401', async () => {
    const res = await request(t.app).post('/api/auth/change-password').send({ current_password: 'x', new_password: 'changed-secret-1' });
    expect(res.status).toBe(401);
  });
});
