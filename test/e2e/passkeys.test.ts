import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeUser, signIn } from '../helpers/factories';
import { enrolTotp, passwordStep } from '../helpers/mfa';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { SoftAuthenticator } from '../helpers/webauthn';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const ORIGIN = 'http://sso.test';

async function registerPasskey(agent: TestAgent, authenticator: SoftAuthenticator, name?: string) {
  const options = await agent.post('/api/auth/passkeys/register/options');
  if (options.status !== 200) throw new Error(`register/options answered ${options.status} ${JSON.stringify(options.body)}`);
  const res = await agent
    .post('/api/auth/passkeys/register')
    .send({ response: authenticator.create(options.body), ...(name ? { name } : {}) });
  if (res.status !== 201) throw new Error(`register answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.passkey as { id: string; name: string };
}

async function userWithPasskey(name?: string) {
  const user = await makeUser(t);
  const { agent } = await signIn(t, user);
  const authenticator = new SoftAuthenticator(ORIGIN);
  const passkey = await registerPasskey(agent, authenticator, name);
  return { user, agent, authenticator, passkey };
}

async function passwordlessSignIn(authenticator: SoftAuthenticator, overrides: Parameters<SoftAuthenticator['get']>[1] = {}) {
  const options = await request(t.app).post('/api/auth/passkeys/login/options');
  return request(t.app)
    .post('/api/auth/passkeys/login')
    .send({ response: authenticator.get(options.body, overrides) });
}

describe('passkey registration', () => {
  test('options: discoverable, RP ID = BASE_URL host, user handle = user id; register -> 201, mail, listed in GET /mfa', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const options = await agent.post('/api/auth/passkeys/register/options');
    expect(options.status).toBe(200);
    expect(options.headers['cache-control']).toMatch(/no-store/);
    expect(options.body.rp.id).toBe('sso.test');
    expect(options.body.user.name).toBe(user.email);
    expect(Buffer.from(options.body.user.id, 'base64url').toString()).toBe(user.id);
    expect(options.body.authenticatorSelection).toMatchObject({ residentKey: 'required', requireResidentKey: true });
    expect(options.body.attestation).toBe('none');
    expect(options.body.excludeCredentials).toEqual([]);

    const authenticator = new SoftAuthenticator(ORIGIN);
    const mailsBefore = t.mails.length;
    const res = await agent.post('/api/auth/passkeys/register').send({ response: authenticator.create(options.body), name: '  Laptop  ' });
    expect(res.status).toBe(201);
    // CONTRACT §11: the account's first factor, of any kind, comes with its 10 recovery codes (shown once).
    expect(res.body).toEqual({
      passkey: { id: expect.any(String), name: 'Laptop', created_at: expect.any(String) },
      recovery_codes: expect.any(Array),
    });
    expect(res.body.recovery_codes).toHaveLength(10);
    expect(await t.db('mfa_recovery_codes').where({ user_id: user.id }).whereNull('used_at')).toHaveLength(10);
    expect(t.mails.slice(mailsBefore).find((m) => m.to === user.email)?.subject).toBe('A sign-in method was added to your account');
    const factors = await agent.get('/api/auth/mfa');
    expect(factors.body).toEqual({
      totp: false,
      passkeys: [{ id: res.body.passkey.id, name: 'Laptop', created_at: res.body.passkey.created_at, last_used_at: null }],
      recovery_codes_left: 10,
    });
    // Registering proved the factor: this session now counts as a second-factor session.
    expect((await agent.get('/api/auth/me')).body.user.amr).toEqual(['pwd', 'hwk']);

    // Several per account: the next options exclude the one already registered; default name "Passkey".
    const next = await agent.post('/api/auth/passkeys/register/options');
    expect(next.body.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([authenticator.credentials[0]!.id.toString('base64url')]);
    const second = await agent.post('/api/auth/passkeys/register').send({ response: new SoftAuthenticator(ORIGIN).create(next.body) });
    expect(second.status).toBe(201);
    expect(second.body.passkey.name).toBe('Passkey');
    expect(second.body.recovery_codes).toBeUndefined();
    expect((await agent.get('/api/auth/mfa')).body.passkeys).toHaveLength(2);
  });

  test('a challenge works once, expires after 5 minutes, and binds origin and user', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const authenticator = new SoftAuthenticator(ORIGIN);
    const options = await agent.post('/api/auth/passkeys/register/options');
    const response = authenticator.create(options.body);
    expect((await agent.post('/api/auth/passkeys/register').send({ response })).status).toBe(201);
    const replay = await agent.post('/api/auth/passkeys/register').send({ response });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('validation_error');

    const late = await agent.post('/api/auth/passkeys/register/options');
    t.clock.advance(301);
    expect((await agent.post('/api/auth/passkeys/register').send({ response: authenticator.create(late.body) })).status).toBe(400);

    const wrongOrigin = await agent.post('/api/auth/passkeys/register/options');
    const evil = authenticator.create(wrongOrigin.body, { origin: 'https://evil.test' });
    expect((await agent.post('/api/auth/passkeys/register').send({ response: evil })).status).toBe(400);

    // Another user's challenge cannot be used.
    const other = await signIn(t, await makeUser(t));
    const theirs = await other.agent.post('/api/auth/passkeys/register/options');
    expect((await agent.post('/api/auth/passkeys/register').send({ response: authenticator.create(theirs.body) })).status).toBe(400);
  });

  test('bad bodies -> 400; not signed in -> 401', async () => {
    const { agent } = await signIn(t, await makeUser(t));
    for (const body of [
      {},
      { response: 'x' },
      { response: { id: 'a', rawId: 'a', type: 'nope', response: {} } },
      {
        response: { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON: 'AA', attestationObject: 'AA' } },
        name: 'x'.repeat(65),
      },
    ]) {
      const res = await agent.post('/api/auth/passkeys/register').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    }
    expect((await request(t.app).post('/api/auth/passkeys/register/options')).status).toBe(401);
  });
});

describe('password-less sign-in with a passkey', () => {
  test('no email needed: options without allowCredentials; the assertion signs in like POST /login with amr ["hwk"]', async () => {
    const { user, authenticator, passkey } = await userWithPasskey();
    const options = await request(t.app).post('/api/auth/passkeys/login/options');
    expect(options.status).toBe(200);
    expect(options.body.rpId).toBe('sso.test');
    expect(options.body.userVerification).toBe('required');
    expect(options.body.allowCredentials ?? []).toEqual([]);
    const res = await request(t.app)
      .post('/api/auth/passkeys/login')
      .send({ response: authenticator.get(options.body) });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['accessToken', 'refreshToken', 'user']);
    expect(res.body.user.id).toBe(user.id);
    expect(((res.headers['set-cookie'] as unknown as string[]) ?? []).some((c) => c.startsWith('accessToken='))).toBe(true);
    const me = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${res.body.accessToken}`);
    expect(me.body.user.amr).toEqual(['hwk']);
    expect(t.ctx.jwt.verifyAccess(res.body.accessToken, t.clock.now())!.amr).toEqual(['hwk']);
    const factors = await request(t.app).get('/api/auth/mfa').set('Authorization', `Bearer ${res.body.accessToken}`);
    expect(factors.body.passkeys[0]).toMatchObject({ id: passkey.id, last_used_at: expect.any(String) });
  });

  test('the signature counter must grow: a cloned authenticator is refused', async () => {
    const { authenticator } = await userWithPasskey();
    expect((await passwordlessSignIn(authenticator, { counter: 5 })).status).toBe(200);
    const cloned = await passwordlessSignIn(authenticator, { counter: 5 });
    expect(cloned.status).toBe(401);
    expect(cloned.body.error).toBe('invalid_credentials');
    expect((await passwordlessSignIn(authenticator, { counter: 6 })).status).toBe(200);
  });

  test('refused: replayed assertion, no user verification, wrong origin, unknown credential, inactive account', async () => {
    const { user, authenticator } = await userWithPasskey();
    const options = await request(t.app).post('/api/auth/passkeys/login/options');
    const response = authenticator.get(options.body);
    expect((await request(t.app).post('/api/auth/passkeys/login').send({ response })).status).toBe(200);
    expect((await request(t.app).post('/api/auth/passkeys/login').send({ response })).status).toBe(401);
    expect((await passwordlessSignIn(authenticator, { userVerified: false })).status).toBe(401);
    expect((await passwordlessSignIn(authenticator, { origin: 'https://evil.test' })).status).toBe(401);
    const stranger = new SoftAuthenticator(ORIGIN);
    stranger.create({ challenge: 'x', rp: { id: 'sso.test' }, user: { id: 'eA' } });
    expect((await passwordlessSignIn(stranger)).status).toBe(401);
    await t.db('users').where({ id: user.id }).update({ is_active: false });
    const inactive = await passwordlessSignIn(authenticator);
    expect(inactive.status).toBe(401);
    expect(inactive.body.error).toBe('invalid_credentials');
  });

  test('a foreign Origin cannot sign in (login CSRF); garbage -> 400', async () => {
    expect((await request(t.app).post('/api/auth/passkeys/login').set('Origin', 'https://evil.test').send({})).status).toBe(403);
    expect(
      (
        await request(t.app)
          .post('/api/auth/passkeys/login')
          .send({ response: { id: '!!' } })
      ).status,
    ).toBe(400);
  });
});

describe('passkey as the second factor of a password sign-in', () => {
  test('mfa_required offers passkey; options list only that account\'s passkeys; the assertion signs in with amr ["pwd","hwk"]', async () => {
    const { user, authenticator } = await userWithPasskey();
    const login = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password });
    expect(login.status).toBe(401);
    expect(login.body.methods).toEqual(['passkey', 'recovery_code']);
    const options = await request(t.app).post('/api/auth/login/mfa/passkey-options').send({ mfa_token: login.body.mfa_token });
    expect(options.status).toBe(200);
    expect(options.body.allowCredentials.map((c: { id: string }) => c.id)).toEqual([
      authenticator.credentials[0]!.id.toString('base64url'),
    ]);
    const res = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: login.body.mfa_token, passkey: authenticator.get(options.body) });
    expect(res.status).toBe(200);
    const me = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${res.body.accessToken}`);
    expect(me.body.user.amr).toEqual(['pwd', 'hwk']);
  });

  test("mfa_token misuse across accounts: another account's passkey, or a challenge issued for another token, is refused", async () => {
    const alice = await userWithPasskey();
    const bob = await userWithPasskey();
    const aliceToken = await passwordStep(t, alice.user);
    const bobToken = await passwordStep(t, bob.user);
    const aliceOptions = await request(t.app).post('/api/auth/login/mfa/passkey-options').send({ mfa_token: aliceToken });
    // Bob's passkey signing Alice's challenge.
    const wrongKey = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: aliceToken, passkey: bob.authenticator.get({ ...aliceOptions.body, allowCredentials: [] }) });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body.error).toBe('invalid_credentials');
    // Alice's challenge presented with Bob's token.
    const bobOptions = await request(t.app).post('/api/auth/login/mfa/passkey-options').send({ mfa_token: aliceToken });
    const crossed = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: bobToken, passkey: bob.authenticator.get({ ...bobOptions.body, allowCredentials: [] }) });
    expect(crossed.status).toBe(401);
    // A password-less challenge is not a second-step challenge.
    const loginOptions = await request(t.app).post('/api/auth/passkeys/login/options');
    const wrongPurpose = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: bobToken, passkey: bob.authenticator.get(loginOptions.body) });
    expect(wrongPurpose.status).toBe(401);
    // Bob still signs in with his own.
    const mine = await request(t.app).post('/api/auth/login/mfa/passkey-options').send({ mfa_token: bobToken });
    expect(
      (
        await request(t.app)
          .post('/api/auth/login/mfa')
          .send({ mfa_token: bobToken, passkey: bob.authenticator.get(mine.body) })
      ).status,
    ).toBe(200);
  });

  test('passkey-options: dead token -> 401; account without passkeys -> 400', async () => {
    expect((await request(t.app).post('/api/auth/login/mfa/passkey-options').send({ mfa_token: 'nope' })).status).toBe(401);
    const user = await makeUser(t);
    await enrolTotp(t, (await signIn(t, user)).agent);
    const res = await request(t.app)
      .post('/api/auth/login/mfa/passkey-options')
      .send({ mfa_token: await passwordStep(t, user) });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
  });
});

describe('managing passkeys', () => {
  test("rename -> 200; another user's or a malformed id -> 404; bad name -> 400", async () => {
    const { agent, passkey } = await userWithPasskey('Old name');
    const renamed = await agent.patch(`/api/auth/passkeys/${passkey.id}`).send({ name: 'Phone' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.passkey).toMatchObject({ id: passkey.id, name: 'Phone' });
    expect((await agent.patch(`/api/auth/passkeys/${passkey.id}`).send({ name: 'a\nb' })).status).toBe(400);
    expect((await agent.patch(`/api/auth/passkeys/${passkey.id}`).send({ name: '' })).status).toBe(400);
    expect((await agent.patch('/api/auth/passkeys/not-a-uuid').send({ name: 'x' })).status).toBe(404);
    const other = await userWithPasskey();
    expect((await other.agent.patch(`/api/auth/passkeys/${passkey.id}`).send({ name: 'Mine now' })).status).toBe(404);
    expect((await other.agent.delete(`/api/auth/passkeys/${passkey.id}`)).status).toBe(404);
  });

  test('remove -> 204, mail; the last factor gone, the password alone signs in again', async () => {
    const { user, agent, passkey } = await userWithPasskey();
    const mailsBefore = t.mails.length;
    expect((await agent.delete(`/api/auth/passkeys/${passkey.id}`)).status).toBe(204);
    expect(t.mails.slice(mailsBefore).find((m) => m.to === user.email)?.subject).toBe('A sign-in method was removed from your account');
    expect((await agent.delete(`/api/auth/passkeys/${passkey.id}`)).status).toBe(404);
    expect((await agent.delete('/api/auth/passkeys/123')).status).toBe(404);
    expect((await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password })).status).toBe(200);
  });
});
