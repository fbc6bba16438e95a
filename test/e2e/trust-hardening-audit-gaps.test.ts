import request from 'supertest';
import { makeUser, signIn } from '../helpers/factories';
import { enrolTotp, passwordStep } from '../helpers/mfa';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { SoftAuthenticator } from '../helpers/webauthn';

/** Issue 30 (info, audit gaps left from the previous review): a second-step lockout and a passkey rename are audited. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function eventsOf(userId: string, type: string) {
  await t.ctx.events.idle();
  return t.db('audit_events').where({ subject_id: userId, type }).orderBy('id');
}

const wrongCode = (mfaToken: string) => request(t.app).post('/api/auth/login/mfa').send({ mfa_token: mfaToken, code: '000000' });

describe('second-step (TOTP / recovery code) lockout', () => {
  test("the fifth wrong code ends the sign-in attempt: auth.login.locked (step second_factor, the attempt's)", async () => {
    const user = await makeUser(t);
    await enrolTotp(t, (await signIn(t, user)).agent);
    const mfaToken = await passwordStep(t, user);
    for (let i = 1; i <= 4; i++) expect((await wrongCode(mfaToken)).status).toBe(401);
    expect(await eventsOf(user.id, 'auth.login.locked')).toHaveLength(0);
    const fifth = await wrongCode(mfaToken);
    expect(fifth.body.message).toMatch(/Too many wrong codes/);
    const locked = await eventsOf(user.id, 'auth.login.locked');
    expect(locked).toHaveLength(1);
    expect(locked[0].detail).toMatchObject({ step: 'second_factor', method: 'totp', locked: 'sign_in_attempt' });
  });

  test('wrong codes and recovery codes reaching the account threshold lock it (locked: account), and a locked attempt is throttled', async () => {
    const user = await makeUser(t);
    await enrolTotp(t, (await signIn(t, user)).agent);
    // Three sign-in attempts started before any wrong code (each mfa_token takes five wrong proofs at most).
    const tokens = [await passwordStep(t, user), await passwordStep(t, user), await passwordStep(t, user)];
    for (let i = 0; i < 5; i++) await wrongCode(tokens[0]!);
    for (let i = 0; i < 5; i++)
      await request(t.app).post('/api/auth/login/mfa').send({ mfa_token: tokens[1], recovery_code: 'aaaaa-bbbbb' });
    const locked = await eventsOf(user.id, 'auth.login.locked');
    expect(locked.map((e) => e.detail.locked)).toEqual(['sign_in_attempt', 'account']);
    expect(locked[1].detail).toMatchObject({ step: 'second_factor', method: 'recovery_code' });

    const refused = await wrongCode(tokens[2]!);
    expect(refused.status).toBe(429);
    const throttled = await eventsOf(user.id, 'auth.login.throttled');
    expect(throttled).toHaveLength(1);
    expect(throttled[0].detail).toMatchObject({ step: 'second_factor' });
  });
});

describe('passkey rename', () => {
  test.each(['api', 'page'])('renaming a passkey (%s) records mfa.factor.renamed with its id and new name', async (via) => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const authenticator = new SoftAuthenticator('http://sso.test');
    const options = await agent.post('/api/auth/passkeys/register/options');
    const registered = await agent.post('/api/auth/passkeys/register').send({ response: authenticator.create(options.body), name: 'Old' });
    expect(registered.status).toBe(201);
    const id = registered.body.passkey.id as string;

    if (via === 'api') {
      expect((await agent.patch(`/api/auth/passkeys/${id}`).send({ name: 'Work laptop' })).status).toBe(200);
    } else {
      const page = await agent.get('/account');
      const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1];
      const res = await agent.post('/account/passkeys/rename').type('form').send({ csrf, id, name: 'Work laptop' });
      expect(res.status).toBe(303);
    }
    const renamed = await eventsOf(user.id, 'mfa.factor.renamed');
    expect(renamed).toHaveLength(1);
    expect(renamed[0]).toMatchObject({ actor_id: user.id, detail: { factor: 'passkey', passkey_id: id, name: 'Work laptop' } });
    // A rename of another user's passkey changes nothing and records nothing.
    const other = await signIn(t, await makeUser(t));
    expect((await other.agent.patch(`/api/auth/passkeys/${id}`).send({ name: 'Mine' })).status).toBe(404);
    expect(await eventsOf(user.id, 'mfa.factor.renamed')).toHaveLength(1);
  });
});
