import request from 'supertest';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { enrolTotp, nextStep, passwordStep, signInWithTotp, totpCode } from '../helpers/mfa';
import { exchangeCode, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function userWithTotp() {
  const user = await makeUser(t);
  const { agent } = await signIn(t, user);
  const { secret, recoveryCodes } = await enrolTotp(t, agent);
  return { user, agent, secret, recoveryCodes };
}

function setCookies(res: request.Response): string[] {
  return (res.headers['set-cookie'] as unknown as string[] | undefined) ?? [];
}

describe('TOTP enrolment', () => {
  test('setup -> pending secret (sealed at rest), confirm -> 10 recovery codes, a mail, GET /mfa shows it', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const setup = await agent.post('/api/auth/mfa/totp/setup');
    expect(setup.status).toBe(200);
    expect(setup.headers['cache-control']).toBe('no-store');
    expect(setup.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(setup.body.otpauth_url);
    expect(url.protocol).toBe('otpauth:');
    expect(url.searchParams.get('secret')).toBe(setup.body.secret);
    expect(url.searchParams.get('issuer')).toBe('sso.test');
    expect(url.searchParams.get('digits')).toBe('6');
    expect(url.searchParams.get('period')).toBe('30');

    const row = await t.db('mfa_totp').where({ user_id: user.id }).first();
    expect(row.secret_sealed).not.toContain(setup.body.secret);
    expect(row.confirmed_at).toBeNull();
    expect((await agent.get('/api/auth/mfa')).body).toEqual({ totp: false, passkeys: [], recovery_codes_left: 0 });

    const wrong = await agent
      .post('/api/auth/mfa/totp/confirm')
      .send({ code: '000000' === totpCode(t, setup.body.secret) ? '111111' : '000000' });
    // CONTRACT §11: a wrong code from a signed-in caller is 403 reauthentication_failed, not 401.
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe('reauthentication_failed');

    const mailsBefore = t.mails.length;
    const confirm = await agent.post('/api/auth/mfa/totp/confirm').send({ code: totpCode(t, setup.body.secret) });
    expect(confirm.status).toBe(200);
    expect(confirm.body.recovery_codes).toHaveLength(10);
    expect(new Set(confirm.body.recovery_codes).size).toBe(10);
    for (const code of confirm.body.recovery_codes) expect(code).toMatch(/^[a-z2-9]{4}(-[a-z2-9]{4}){3}$/);
    const stored = await t.db('mfa_recovery_codes').where({ user_id: user.id });
    expect(stored).toHaveLength(10);
    for (const r of stored) expect(confirm.body.recovery_codes).not.toContain(r.code_hash);
    const mail = t.mails.slice(mailsBefore).find((m) => m.to === user.email);
    expect(mail?.subject).toBe('A sign-in method was added to your account');
    expect(mail?.text).toContain('authenticator app');
    expect((await agent.get('/api/auth/mfa')).body).toEqual({ totp: true, passkeys: [], recovery_codes_left: 10 });

    // The code that confirmed is spent; a second setup is refused while one is active.
    expect((await agent.post('/api/auth/mfa/totp/setup')).status).toBe(409);
  });

  test('confirm without setup -> 409; bad bodies -> 400; not signed in -> 401', async () => {
    const { agent } = await signIn(t, await makeUser(t));
    expect((await agent.post('/api/auth/mfa/totp/confirm').send({ code: '123456' })).status).toBe(409);
    const bad = await agent.post('/api/auth/mfa/totp/confirm').send({ code: 123456 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_error');
    expect((await request(t.app).post('/api/auth/mfa/totp/setup')).status).toBe(401);
    expect((await request(t.app).get('/api/auth/mfa')).status).toBe(401);
  });
});

describe('POST /api/auth/login with a second factor', () => {
  test('right password -> 401 mfa_required with mfa_token and methods; no cookie, no session', async () => {
    const { user } = await userWithTotp();
    const sessionsBefore = await t.db('sessions').where({ user_id: user.id }).count<{ n: string }[]>({ n: '*' });
    const res = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: 'mfa_required',
      message: expect.any(String),
      mfa_token: expect.any(String),
      methods: ['totp', 'recovery_code'],
    });
    expect(res.body.mfa_token.length).toBeGreaterThanOrEqual(43);
    expect(setCookies(res).filter((c) => /^(accessToken|refreshToken)=/.test(c))).toEqual([]);
    const sessionsAfter = await t.db('sessions').where({ user_id: user.id }).count<{ n: string }[]>({ n: '*' });
    expect(sessionsAfter[0]!.n).toBe(sessionsBefore[0]!.n);
    // Only the hash is stored.
    expect(await t.db('mfa_tokens').where({ token_hash: res.body.mfa_token }).first()).toBeUndefined();
  });

  test('wrong password still answers invalid_credentials (no mfa_token)', async () => {
    const { user } = await userWithTotp();
    const res = await request(t.app).post('/api/auth/login').send({ email: user.email, password: 'wrong-password' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_credentials');
    expect(res.body.mfa_token).toBeUndefined();
  });

  test('code -> signed in like POST /login; amr ["pwd","otp"] in the token, /me and the session row', async () => {
    const { user, secret } = await userWithTotp();
    const mfaToken = await passwordStep(t, user);
    const res = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: mfaToken, code: totpCode(t, secret) });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['accessToken', 'refreshToken', 'user']);
    expect(res.body.user).toMatchObject({ id: user.id, email: user.email });
    expect(setCookies(res).some((c) => c.startsWith('accessToken='))).toBe(true);
    const claims = t.ctx.jwt.verifyAccess(res.body.accessToken, t.clock.now())!;
    expect(claims.amr).toEqual(['pwd', 'otp']);
    const me = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${res.body.accessToken}`);
    expect(me.body.user.amr).toEqual(['pwd', 'otp']);
    const session = await t.db('sessions').where({ id: claims.sid }).first();
    expect(session.amr).toEqual(['pwd', 'otp']);

    // The refresh keeps the session's amr.
    const refreshed = await request(t.app).post('/api/auth/refresh-token').send({ refreshToken: res.body.refreshToken });
    expect(refreshed.status).toBe(200);
    expect(t.ctx.jwt.verifyAccess(refreshed.body.accessToken, t.clock.now())!.amr).toEqual(['pwd', 'otp']);
    // The mfa_token is spent.
    nextStep(t);
    const again = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: mfaToken, code: totpCode(t, secret) });
    expect(again.status).toBe(401);
    expect(again.body.error).toBe('unauthorized');
  });

  test('a password-only sign-in says amr ["pwd"]', async () => {
    const user = await makeUser(t);
    const { accessToken } = await signIn(t, user);
    expect(t.ctx.jwt.verifyAccess(accessToken, t.clock.now())!.amr).toEqual(['pwd']);
    const me = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`);
    expect(me.body.user.amr).toEqual(['pwd']);
  });

  test('a code is accepted once: the same code again (replay) -> 401', async () => {
    const { user, secret } = await userWithTotp();
    const code = totpCode(t, secret);
    const first = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: await passwordStep(t, user), code });
    expect(first.status).toBe(200);
    const replay = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: await passwordStep(t, user), code });
    expect(replay.status).toBe(401);
    expect(replay.body.error).toBe('invalid_credentials');
  });

  test('one step of drift either way is accepted; two steps is not', async () => {
    const { user, secret } = await userWithTotp();
    nextStep(t); // the enrolment spent the previous step
    const old = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: await passwordStep(t, user), code: totpCode(t, secret, -2) });
    expect(old.status).toBe(401);
    const previous = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: await passwordStep(t, user), code: totpCode(t, secret, -1) });
    expect(previous.status).toBe(200);
    const ahead = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: await passwordStep(t, user), code: totpCode(t, secret, 1) });
    expect(ahead.status).toBe(200);
    // Step +1 is spent now: the current step's code is older and refused as a replay.
    const current = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: await passwordStep(t, user), code: totpCode(t, secret) });
    expect(current.status).toBe(401);
  });

  test('two concurrent completions with one token and one code: exactly one session', async () => {
    const { user, secret } = await userWithTotp();
    const mfaToken = await passwordStep(t, user);
    const code = totpCode(t, secret);
    const results = await Promise.all([0, 1, 2].map(() => request(t.app).post('/api/auth/login/mfa').send({ mfa_token: mfaToken, code })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401]);
  });

  test('the mfa_token expires after 5 minutes', async () => {
    const { user, secret } = await userWithTotp();
    const mfaToken = await passwordStep(t, user);
    t.clock.advance(301);
    const res = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: mfaToken, code: totpCode(t, secret) });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthorized');
  });

  test('the mfa_token dies after 5 wrong codes, even for the right one', async () => {
    const { user, secret } = await userWithTotp();
    const mfaToken = await passwordStep(t, user);
    const wrong = totpCode(t, secret) === '123456' ? '654321' : '123456';
    for (let i = 1; i <= 5; i++) {
      const res = await request(t.app).post('/api/auth/login/mfa').send({ mfa_token: mfaToken, code: wrong });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_credentials');
      if (i === 5) expect(res.body.message).toMatch(/sign in again/i);
    }
    const right = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: mfaToken, code: totpCode(t, secret) });
    expect(right.status).toBe(401);
    expect(right.body.error).toBe('unauthorized');
  });

  test("an mfa_token is bound to its account: another account's valid code does not open it", async () => {
    const alice = await userWithTotp();
    const bob = await userWithTotp();
    const aliceToken = await passwordStep(t, alice.user);
    const res = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: aliceToken, code: totpCode(t, bob.secret) });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_credentials');
    // Bob's code is still his to use (it was checked against Alice's secret only).
    const bobRes = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: await passwordStep(t, bob.user), code: totpCode(t, bob.secret) });
    expect(bobRes.status).toBe(200);
    expect(bobRes.body.user.id).toBe(bob.user.id);
  });

  test('garbage tokens and bodies: 401 / 400, never 5xx', async () => {
    const cases: Array<[Record<string, unknown>, number]> = [
      [{ mfa_token: 'nope', code: '123456' }, 401],
      [{ mfa_token: 'nope' }, 400],
      [{ mfa_token: 'nope', code: '123456', recovery_code: 'aaaa' }, 400],
      [{ code: '123456' }, 400],
      [{ mfa_token: 'x'.repeat(600), code: '123456' }, 400],
      [{ mfa_token: 'nope', passkey: { id: 'x' } }, 400],
    ];
    for (const [body, status] of cases) {
      const res = await request(t.app).post('/api/auth/login/mfa').send(body);
      expect(res.status).toBe(status);
    }
  });

  test('a foreign Origin cannot complete a sign-in (login CSRF)', async () => {
    const res = await request(t.app)
      .post('/api/auth/login/mfa')
      .set('Origin', 'https://evil.test')
      .send({ mfa_token: 'x', code: '123456' });
    expect(res.status).toBe(403);
  });
});

describe('throttle interplay (CONTRACT §4 + §10)', () => {
  test('wrong codes count toward the address throttle: the 10th failure locks the address, even the right password', async () => {
    const { user, secret } = await userWithTotp();
    // A wrong password counts; a right one that only opens the second step does not.
    await request(t.app).post('/api/auth/login').send({ email: user.email, password: 'wrong-password' });
    // 5 wrong codes: the token is dead, 6 failures.
    const first = await passwordStep(t, user);
    for (let i = 0; i < 5; i++) await request(t.app).post('/api/auth/login/mfa').send({ mfa_token: first, code: '000001' });
    // 4 more wrong codes = 10.
    const second = await passwordStep(t, user);
    for (let i = 0; i < 4; i++) await request(t.app).post('/api/auth/login/mfa').send({ mfa_token: second, code: '000001' });
    const locked = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: second, code: totpCode(t, secret) });
    expect(locked.status).toBe(429);
    expect(locked.body.error).toBe('too_many_attempts');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    const password = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password });
    expect(password.status).toBe(429);

    // After the lock, a complete sign-in resets the counter.
    t.clock.advance(61);
    const ok = await signInWithTotp(t, user, secret);
    expect(ok.body.user.id).toBe(user.id);
    const row = await t.db('login_failures').where({ email: user.email }).first();
    expect(row).toBeUndefined();
  });
});

describe('recovery codes', () => {
  test('a recovery code signs in once (amr ["pwd","rec"]), mails the owner; reuse -> 401', async () => {
    const { user, recoveryCodes } = await userWithTotp();
    const code = recoveryCodes[3]!;
    const mailsBefore = t.mails.length;
    // Typed back in upper case with spaces: still the same code.
    const res = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: await passwordStep(t, user), recovery_code: ` ${code.toUpperCase()} ` });
    expect(res.status).toBe(200);
    const me = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${res.body.accessToken}`);
    expect(me.body.user.amr).toEqual(['pwd', 'rec']);
    await t.ctx.mailer.idle();
    await new Promise((r) => setTimeout(r, 50));
    const mail = t.mails.slice(mailsBefore).find((m) => m.to === user.email);
    expect(mail?.subject).toBe('A recovery code was used to sign in');
    expect(mail?.text).toContain('9 unused recovery codes left');
    const reuse = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: await passwordStep(t, user), recovery_code: code });
    expect(reuse.status).toBe(401);
    expect(reuse.body.error).toBe('invalid_credentials');
    const factors = await request(t.app).get('/api/auth/mfa').set('Authorization', `Bearer ${res.body.accessToken}`);
    expect(factors.body.recovery_codes_left).toBe(9);
  });

  test('regenerate needs the password; new codes replace the old ones', async () => {
    const { user, secret, recoveryCodes } = await userWithTotp();
    const { agent } = await signInWithTotp(t, user, secret);
    const wrong = await agent.post('/api/auth/mfa/recovery-codes').send({ password: 'not-it' });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe('reauthentication_failed');
    const res = await agent.post('/api/auth/mfa/recovery-codes').send({ password: user.password });
    expect(res.status).toBe(200);
    expect(res.body.recovery_codes).toHaveLength(10);
    const old = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: await passwordStep(t, user), recovery_code: recoveryCodes[0] });
    expect(old.status).toBe(401);
    const fresh = await request(t.app)
      .post('/api/auth/login/mfa')
      .send({ mfa_token: await passwordStep(t, user), recovery_code: res.body.recovery_codes[0] });
    expect(fresh.status).toBe(200);
  });

  test('without a second factor there is nothing to back up: 409', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    expect((await agent.post('/api/auth/mfa/recovery-codes').send({ password: user.password })).status).toBe(409);
  });
});

describe('DELETE /api/auth/mfa/totp', () => {
  test('with a current code -> 204, mail, recovery codes gone, password alone signs in again', async () => {
    const { user, secret } = await userWithTotp();
    const { agent } = await signInWithTotp(t, user, secret);
    const wrong = await agent.delete('/api/auth/mfa/totp').send({ code: '000000' === totpCode(t, secret) ? '111111' : '000000' });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe('reauthentication_failed');
    const mailsBefore = t.mails.length;
    const res = await agent.delete('/api/auth/mfa/totp').send({ code: totpCode(t, secret) });
    expect(res.status).toBe(204);
    expect(t.mails.slice(mailsBefore).find((m) => m.to === user.email)?.subject).toBe('A sign-in method was removed from your account');
    expect((await agent.get('/api/auth/mfa')).body).toEqual({ totp: false, passkeys: [], recovery_codes_left: 0 });
    const login = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password });
    expect(login.status).toBe(200);
  });

  test('with the password from a session opened with the second factor -> 204', async () => {
    const { user, secret } = await userWithTotp();
    const { agent } = await signInWithTotp(t, user, secret);
    expect((await agent.delete('/api/auth/mfa/totp').send({ password: 'wrong-one' })).status).toBe(403);
    expect((await agent.delete('/api/auth/mfa/totp').send({ password: user.password })).status).toBe(204);
  });

  test('step-up: a password-only session opened before enrolment cannot remove it with the password, nor add factors', async () => {
    const user = await makeUser(t);
    const old = await signIn(t, user);
    const enroller = await signIn(t, user);
    await enrolTotp(t, enroller.agent);
    const res = await old.agent.delete('/api/auth/mfa/totp').send({ password: user.password });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('mfa_required');
    expect((await old.agent.post('/api/auth/passkeys/register/options')).status).toBe(403);
    expect((await old.agent.post('/api/auth/mfa/recovery-codes').send({ password: user.password })).status).toBe(403);
  });

  test('neither or both of password and code -> 400', async () => {
    const { agent } = await userWithTotp();
    expect((await agent.delete('/api/auth/mfa/totp').send({})).status).toBe(400);
    expect((await agent.delete('/api/auth/mfa/totp').send({ password: 'a', code: '123456' })).status).toBe(400);
  });
});

describe('OAuth sessions carry how the user signed in', () => {
  test('authorize after a TOTP sign-in: the session the client gets has amr ["pwd","otp"]', async () => {
    const { user, secret } = await userWithTotp();
    const { agent } = await signInWithTotp(t, user, secret);
    const client = await makeClient(t);
    const { code, verifier } = await obtainCode(agent, client);
    const token = await exchangeCode(t, client, { code, verifier });
    expect(token.status).toBe(200);
    const claims = t.ctx.jwt.verifyAccess(token.body.access_token, t.clock.now())!;
    expect(claims.amr).toEqual(['pwd', 'otp']);
    expect((await t.db('sessions').where({ id: claims.sid }).first()).amr).toEqual(['pwd', 'otp']);
  });
});
