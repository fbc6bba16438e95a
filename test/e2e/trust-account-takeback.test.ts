import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeSignedInUser, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { enrolTotp, signInWithTotp } from '../helpers/mfa';
import { runCli } from '../helpers/processes';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';
import { SoftAuthenticator } from '../helpers/webauthn';

/**
 * CONTRACT §11 "Taking an account back ends every factor": whoever registered someone else's address and enrolled
 * a passkey or an authenticator app loses them when the mailbox owner sets a password through a mailed link, and
 * when an operator runs create-admin on the address. Administrators reset factors with DELETE /api/users/:id/mfa.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);
const ORIGIN = 'http://sso.test';

async function addPasskey(agent: TestAgent): Promise<SoftAuthenticator> {
  const authenticator = new SoftAuthenticator(ORIGIN);
  const options = await agent.post('/api/auth/passkeys/register/options');
  expect(options.status).toBe(200);
  const res = await agent.post('/api/auth/passkeys/register').send({ response: authenticator.create(options.body) });
  expect(res.status).toBe(201);
  return authenticator;
}

async function passwordlessSignIn(authenticator: SoftAuthenticator) {
  const options = await api().post('/api/auth/passkeys/login/options');
  return api()
    .post('/api/auth/passkeys/login')
    .send({ response: authenticator.get(options.body) });
}

/** A registrant squatting `email`: registered, a passkey and an authenticator app enrolled, signed in. */
async function squatter(email: string) {
  const agent = request.agent(t.app);
  const reg = await agent.post('/api/auth/register').send({ first_name: 'Squat', last_name: 'Ter', email, password: 'squatter-pass-1' });
  expect(reg.status).toBe(201);
  const authenticator = await addPasskey(agent);
  await enrolTotp(t, agent);
  const userId: string = reg.body.user.id;
  return { agent, authenticator, userId, accessToken: reg.body.accessToken as string };
}

async function factorRows(userId: string) {
  const [passkeys, totp, codes] = await Promise.all([
    t.db('webauthn_credentials').where({ user_id: userId }),
    t.db('mfa_totp').where({ user_id: userId }),
    t.db('mfa_recovery_codes').where({ user_id: userId }),
  ]);
  return { passkeys: passkeys.length, totp: totp.length, codes: codes.length };
}

function lastLinkTo(email: string, path: string): string {
  const mail = [...t.mails].reverse().find((m) => m.to === email && m.text.includes(`${path}?token=`));
  return /token=([A-Za-z0-9_-]{43})/.exec(mail!.text)![1]!;
}

describe('set-password through a mailed link on a never-verified account', () => {
  test("the registrant's passkey, authenticator app and recovery codes are removed, its sessions end, the owner is mailed", async () => {
    const email = uniqueEmail('taken');
    const s = await squatter(email);
    expect(await factorRows(s.userId)).toEqual({ passkeys: 1, totp: 1, codes: 10 });
    expect((await passwordlessSignIn(s.authenticator)).status).toBe(200);

    // The mailbox owner opens the verification link mailed at registration and chooses a password.
    const token = lastLinkTo(email, '/verify-email');
    const mailsBefore = t.mails.length;
    const res = await api().post('/api/auth/set-password').send({ token, password: 'owner-pass-123' });
    expect(res.status).toBe(200);

    expect(await factorRows(s.userId)).toEqual({ passkeys: 0, totp: 0, codes: 0 });
    // The planted passkey no longer signs in; the registrant's session is over; the owner's password needs no code.
    const planted = await passwordlessSignIn(s.authenticator);
    expect(planted.status).toBe(401);
    expect((await s.agent.get('/api/auth/me')).status).toBe(401);
    const owner = await api().post('/api/auth/login').send({ email, password: 'owner-pass-123' });
    expect(owner.status).toBe(200);
    expect(owner.body.user.email_verified).toBe(true);

    const notice = t.mails.slice(mailsBefore).find((m) => m.to === email);
    expect(notice?.subject).toBe('The second factors of your account were removed');
    expect(notice?.text).toContain('1 passkey');
    expect(notice?.text).toContain('the authenticator app');
    const audit = await t.db('audit_events').where({ type: 'mfa.factors.reset', subject_id: s.userId });
    expect(audit).toHaveLength(1);
    expect(audit[0].detail).toEqual({ via: 'set_password_link', passkeys: 1, authenticator_app: true, recovery_codes: 10 });
  });

  test('a verified account resetting its password through forgot-password keeps its factors', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    await addPasskey(agent);
    await api().post('/api/auth/forgot-password').send({ email: user.email }).expect(202);
    const res = await api()
      .post('/api/auth/set-password')
      .send({
        token: lastLinkTo(user.email, '/set-password'),
        password: 'new-pass-456',
      });
    expect(res.status).toBe(200);
    expect((await factorRows(user.id)).passkeys).toBe(1);
    expect(await t.db('audit_events').where({ type: 'mfa.factors.reset', subject_id: user.id })).toHaveLength(0);
  });
});

describe('npm run admin -- create-admin on an existing account', () => {
  test('removes every factor, ends the sessions, mails the address and prints what it removed', async () => {
    const email = uniqueEmail('cli-target');
    const s = await squatter(email);
    const cli = await runCli('admin', ['create-admin', '--email', email, '--password', 'operator-pass-1'], {
      ...process.env,
      ...TEST_ENV,
      DATABASE_URL: t.databaseUrl,
    });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(`Promoted super_admin ${email}`);
    expect(cli.stdout).toContain('Removed 1 passkey, an authenticator app and 10 recovery codes; the address was notified by mail.');
    expect(cli.stdout).toContain('Every session of the account was signed out.');

    expect(await factorRows(s.userId)).toEqual({ passkeys: 0, totp: 0, codes: 0 });
    // The planted passkey would have been a super_admin sign-in satisfying MFA_REQUIRED_FOR_ADMINS.
    expect((await passwordlessSignIn(s.authenticator)).status).toBe(401);
    expect((await api().get('/api/auth/me').set('Authorization', `Bearer ${s.accessToken}`)).status).toBe(401);
    const audit = await t.db('audit_events').where({ type: 'mfa.factors.reset', subject_id: s.userId }).first();
    expect(audit.detail).toMatchObject({ via: 'create_admin', passkeys: 1, authenticator_app: true });
  }, 90_000);
});

describe('DELETE /api/users/:userId/mfa (admin reset)', () => {
  async function userWithFactors() {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const { secret } = await enrolTotp(t, agent);
    const signedIn = await signInWithTotp(t, user, secret);
    await addPasskey(signedIn.agent);
    return user;
  }

  test('an admin resets a user: 204, factors gone, the password alone signs in, mailed, audited with the actor', async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const user = await userWithFactors();
    const mailsBefore = t.mails.length;
    const res = await api().delete(`/api/users/${user.id}/mfa`).set('Authorization', admin.bearer);
    expect(res.status).toBe(204);
    expect(await factorRows(user.id)).toEqual({ passkeys: 0, totp: 0, codes: 0 });
    expect((await api().post('/api/auth/login').send({ email: user.email, password: user.password })).status).toBe(200);
    expect(t.mails.slice(mailsBefore).find((m) => m.to === user.email)?.text).toContain('An administrator reset the second factors');
    const audit = await t.db('audit_events').where({ type: 'mfa.factors.reset', subject_id: user.id }).first();
    expect(audit.actor_id).toBe(admin.user.id);
    expect(audit.detail).toMatchObject({ via: 'admin', passkeys: 1, authenticator_app: true });
  });

  test('strictly more rights needed: a manager cannot reset an admin; nobody resets a super_admin (CONTRACT §8)', async () => {
    const manager = await makeSignedInUser(t, ['manager']);
    const admin = await makeUser(t, { roles: ['admin'] });
    const refused = await api().delete(`/api/users/${admin.id}/mfa`).set('Authorization', manager.bearer);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');

    const otherAdmin = await makeSignedInUser(t, ['admin']);
    const boss = await makeUser(t, { roles: ['super_admin'] });
    expect((await api().delete(`/api/users/${boss.id}/mfa`).set('Authorization', otherAdmin.bearer)).status).toBe(403);
    const superAdmin = await makeSignedInUser(t, ['super_admin']);
    expect((await api().delete(`/api/users/${boss.id}/mfa`).set('Authorization', superAdmin.bearer)).status).toBe(403);
    expect((await api().delete(`/api/users/${admin.id}/mfa`).set('Authorization', superAdmin.bearer)).status).toBe(204);
    expect((await api().delete(`/api/users/${admin.id}/mfa`).set('Authorization', otherAdmin.bearer)).status).toBe(403);
  });

  test('users:write is required; own account refused; unknown user 404; malformed id 400', async () => {
    const plain = await makeSignedInUser(t);
    const target = await makeUser(t);
    expect((await api().delete(`/api/users/${target.id}/mfa`).set('Authorization', plain.bearer)).status).toBe(403);
    const admin = await makeSignedInUser(t, ['admin']);
    const own = await api().delete(`/api/users/${admin.user.id}/mfa`).set('Authorization', admin.bearer);
    expect(own.status).toBe(403);
    expect((await api().delete('/api/users/00000000-0000-4000-8000-000000000000/mfa').set('Authorization', admin.bearer)).status).toBe(404);
    expect((await api().delete('/api/users/nope/mfa').set('Authorization', admin.bearer)).status).toBe(400);
  });
});
