import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeUser, signIn } from '../helpers/factories';
import { enrolTotp, nextStep, signInWithTotp, totpCode } from '../helpers/mfa';
import { csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { SoftAuthenticator } from '../helpers/webauthn';

/**
 * CONTRACT §11: adding or removing a factor needs a sign-in at most 10 minutes old or a proof in the same request
 * (403 reauthentication_required otherwise); a wrong proof from a signed-in caller is 403 reauthentication_failed,
 * counted on the sign-in throttle and audited; a pending TOTP enrolment belongs to its session for 10 minutes.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const ORIGIN = 'http://sso.test';
const OLD = 601;
const api = () => request(t.app);

async function addPasskey(agent: TestAgent, proof: Record<string, unknown> = {}) {
  const authenticator = new SoftAuthenticator(ORIGIN);
  const options = await agent.post('/api/auth/passkeys/register/options').send(proof);
  expect(options.status).toBe(200);
  const res = await agent.post('/api/auth/passkeys/register').send({ response: authenticator.create(options.body) });
  expect(res.status).toBe(201);
  return { authenticator, id: res.body.passkey.id as string };
}

/** A passkey assertion as a proof: options from the password-less sign-in endpoint, signed by `authenticator`. */
async function passkeyProof(authenticator: SoftAuthenticator) {
  const options = await api().post('/api/auth/passkeys/login/options');
  return { passkey: authenticator.get(options.body) };
}

describe('a sign-in older than 10 minutes cannot change factors without a proof', () => {
  test('a stolen access token cannot plant a passkey or start TOTP: 403 reauthentication_required, nothing stored', async () => {
    const user = await makeUser(t);
    const { accessToken } = await signIn(t, user);
    t.clock.advance(OLD);
    const bearer = `Bearer ${accessToken}`;
    const options = await api().post('/api/auth/passkeys/register/options').set('Authorization', bearer);
    expect(options.status).toBe(403);
    expect(options.body.error).toBe('reauthentication_required');
    const setup = await api().post('/api/auth/mfa/totp/setup').set('Authorization', bearer);
    expect(setup.status).toBe(403);
    expect(setup.body.error).toBe('reauthentication_required');
    expect(await t.db('webauthn_challenges').where({ user_id: user.id })).toHaveLength(0);
    expect(await t.db('mfa_totp').where({ user_id: user.id })).toHaveLength(0);
  });

  test('the password in the request is enough, and makes the sign-in recent for the next call', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    t.clock.advance(OLD);
    const wrong = await agent.post('/api/auth/passkeys/register/options').send({ password: 'not-the-password' });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe('reauthentication_failed');
    // A passkey added in two calls: the proof on the options call covers the register call.
    const { id } = await addPasskey(agent, { password: user.password });
    t.clock.advance(OLD);
    const removal = await agent.delete(`/api/auth/passkeys/${id}`);
    expect(removal.status).toBe(403);
    expect(removal.body.error).toBe('reauthentication_required');
    expect((await agent.delete(`/api/auth/passkeys/${id}`).send({ password: user.password })).status).toBe(204);
  });

  test("a passkey assertion is a proof too; another account's passkey is not", async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const first = await addPasskey(agent);
    const second = await addPasskey(agent);
    t.clock.advance(OLD);
    const stranger = await makeUser(t);
    const strangerSession = await signIn(t, stranger);
    const theirs = await addPasskey(strangerSession.agent);
    const foreign = await agent.delete(`/api/auth/passkeys/${second.id}`).send(await passkeyProof(theirs.authenticator));
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toBe('reauthentication_failed');
    expect((await agent.delete(`/api/auth/passkeys/${second.id}`).send(await passkeyProof(first.authenticator))).status).toBe(204);
  });

  test('more than one proof, or a malformed one, is a 400', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const both = await agent.post('/api/auth/mfa/totp/setup').send({ password: user.password, code: '123456' });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe('validation_error');
    expect((await agent.post('/api/auth/mfa/totp/setup').send({ password: 42 })).status).toBe(400);
  });
});

describe('every guess counts (CONTRACT §4 throttle, audited)', () => {
  test('wrong codes at DELETE /mfa/totp: 403 each, audited, and after 10 the address is locked for sign-in too', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const { secret } = await enrolTotp(t, agent);
    const signedIn = await signInWithTotp(t, user, secret);
    const wrongCode = () => ('000000' === totpCode(t, secret) ? '111111' : '000000');
    for (let i = 0; i < 10; i++) {
      const res = await signedIn.agent.delete('/api/auth/mfa/totp').send({ code: wrongCode() });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('reauthentication_failed');
    }
    const locked = await signedIn.agent.delete('/api/auth/mfa/totp').send({ code: totpCode(t, secret) });
    expect(locked.status).toBe(429);
    expect(locked.body.error).toBe('too_many_attempts');
    expect(locked.headers['retry-after']).toMatch(/^\d+$/);
    expect((await api().post('/api/auth/login').send({ email: user.email, password: user.password })).status).toBe(429);
    expect((await t.db('mfa_totp').where({ user_id: user.id }).first()).confirmed_at).not.toBeNull();
    const audit = await t.db('audit_events').where({ type: 'auth.reauthentication.failed', subject_id: user.id });
    expect(audit).toHaveLength(10);
    expect(audit[0].detail).toEqual({ method: 'totp' });
    expect(await t.db('audit_events').where({ type: 'auth.login.locked', subject_id: user.id })).toHaveLength(1);
  });

  test('a wrong first code at TOTP confirm counts on the same throttle and is audited', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const setup = await agent.post('/api/auth/mfa/totp/setup');
    const wrong = await agent
      .post('/api/auth/mfa/totp/confirm')
      .send({ code: '000000' === totpCode(t, setup.body.secret) ? '111111' : '000000' });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe('reauthentication_failed');
    expect((await t.db('login_failures').where({ email: user.email }).first()).failures).toBe(1);
    expect(await t.db('audit_events').where({ type: 'auth.reauthentication.failed', subject_id: user.id })).toHaveLength(1);
  });

  test('wrong recovery codes and passwords at POST /mfa/recovery-codes count too', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const { secret } = await enrolTotp(t, agent);
    const signedIn = await signInWithTotp(t, user, secret);
    expect((await signedIn.agent.post('/api/auth/mfa/recovery-codes').send({ recovery_code: 'aaaa-bbbb-cccc-dddd' })).status).toBe(403);
    expect((await signedIn.agent.post('/api/auth/mfa/recovery-codes').send({ password: 'nope-nope' })).status).toBe(403);
    expect((await t.db('login_failures').where({ email: user.email }).first()).failures).toBe(2);
    const methods = (await t.db('audit_events').where({ type: 'auth.reauthentication.failed', subject_id: user.id })).map(
      (r) => r.detail.method,
    );
    expect(methods.sort()).toEqual(['password', 'recovery_code']);
  });
});

describe('a pending TOTP enrolment belongs to its session and lasts 10 minutes', () => {
  test('another session of the same account cannot see or confirm it', async () => {
    const user = await makeUser(t);
    const laptop = await signIn(t, user);
    const phone = await signIn(t, user);
    const setup = await laptop.agent.post('/api/auth/mfa/totp/setup');
    expect(setup.status).toBe(200);
    const stolen = await phone.agent.post('/api/auth/mfa/totp/confirm').send({ code: totpCode(t, setup.body.secret) });
    expect(stolen.status).toBe(409);
    expect((await phone.agent.get('/account')).text).not.toContain(setup.body.secret);
    expect((await laptop.agent.get('/account')).text).toContain(setup.body.secret);
    expect((await laptop.agent.post('/api/auth/mfa/totp/confirm').send({ code: totpCode(t, setup.body.secret) })).status).toBe(200);
  });

  test('after 10 minutes it cannot be confirmed any more, even with a proof', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const setup = await agent.post('/api/auth/mfa/totp/setup');
    t.clock.advance(OLD);
    const late = await agent.post('/api/auth/mfa/totp/confirm').send({ code: totpCode(t, setup.body.secret), password: user.password });
    expect(late.status).toBe(409);
    expect((await t.db('mfa_totp').where({ user_id: user.id }).first()).confirmed_at).toBeNull();
  });

  test('confirming needs the recent sign-in too: 403 without a proof, 200 with the password', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    t.clock.advance(540);
    const setup = await agent.post('/api/auth/mfa/totp/setup');
    expect(setup.status).toBe(200);
    t.clock.advance(120);
    const code = totpCode(t, setup.body.secret);
    const refused = await agent.post('/api/auth/mfa/totp/confirm').send({ code });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('reauthentication_required');
    expect((await agent.post('/api/auth/mfa/totp/confirm').send({ code, password: user.password })).status).toBe(200);
  });
});

describe('/account follows the same rules', () => {
  test('past 10 minutes the factor forms ask for the password; without it the page says why (403)', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const csrf = await csrfFrom(agent, '/account');
    expect((await agent.get('/account')).text).not.toContain('id="totp_setup_password"');
    t.clock.advance(OLD);
    const page = await agent.get('/account');
    expect(page.text).toContain('<input type="password" id="totp_setup_password" name="password"');
    expect(page.text).toContain('id="passkey_add_password"');
    const refused = await agent.post('/account/totp/setup').type('form').send({ csrf });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('You signed in more than 10 minutes ago');
    const wrong = await agent.post('/account/totp/setup').type('form').send({ csrf, password: 'not-it-at-all' });
    expect(wrong.status).toBe(403);
    expect(wrong.text).toContain('That password or code is not correct.');
    expect((await agent.post('/account/totp/setup').type('form').send({ csrf, password: user.password })).status).toBe(303);
    nextStep(t);
  });

  test('the passkey name form refuses control characters like the API (one rule, mfa.schemas.ts)', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const csrf = await csrfFrom(agent, '/account');
    const { id } = await addPasskey(agent);
    const rename = await agent.post('/account/passkeys/rename').type('form').send({ csrf, id, name: 'Desk\u0007top' });
    expect(rename.status).toBe(400);
    // The API's rule refuses; the page says it in its own words (and language).
    expect(rename.text).toContain('Give the passkey a name of 1 to 64 characters, on one line.');
    const api = await agent.patch(`/api/auth/passkeys/${id}`).send({ name: 'Desk\u0007top' });
    expect(api.status).toBe(400);
    expect(api.body.details[0].message).toBe('name must be one line without control characters');
    expect((await t.db('webauthn_credentials').where({ id }).first()).name).toBe('Passkey');

    const options = await agent.post('/api/auth/passkeys/register/options');
    const response = new SoftAuthenticator(ORIGIN).create(options.body);
    const add = await agent
      .post('/account/passkeys')
      .type('form')
      .send({ csrf, response: JSON.stringify(response), name: 'Line\nbreak' });
    expect(add.status).toBe(400);
    expect(add.text).toContain('Give the passkey a name of 1 to 64 characters, on one line.');
    expect(await t.db('webauthn_credentials').where({ user_id: user.id })).toHaveLength(1);
  });
});

describe('the hosted account forms are under the per-IP limiter', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ env: { RATE_LIMIT_MAX: '3' } });
  });
  afterAll(() => limited.close());

  test('password guesses through /account are cut off by the limiter (429 page), not only by the address throttle', async () => {
    const user = await makeUser(limited);
    const agent = request.agent(limited.app);
    await agent.post('/api/auth/login').send({ email: user.email, password: user.password }).expect(200);
    const csrf = await csrfFrom(agent, '/account');
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push(
        (
          await agent
            .post('/account/recovery-codes')
            .type('form')
            .send({ csrf, password: `guess-${i}` })
        ).status,
      );
    }
    expect(statuses.at(-1)).toBe(429);
    const res = await agent.post('/account/recovery-codes').type('form').send({ csrf, password: 'guess-x' });
    expect(res.status).toBe(429);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });
});
