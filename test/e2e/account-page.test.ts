import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { nextStep, totpCode } from '../helpers/mfa';
import { csrfFrom, exchangeCode, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { SoftAuthenticator } from '../helpers/webauthn';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { MFA_REQUIRED_FOR_ADMINS: 'true' } });
});
afterAll(async () => {
  await t.close();
});

async function signedInAgent(roles: string[] = []) {
  const user = await makeUser(t, { roles });
  const { agent } = await signIn(t, user);
  const csrf = await csrfFrom(agent, '/account');
  return { user, agent, csrf };
}

function secretOf(html: string): string {
  const match = /id="totp-secret">([A-Z2-7]+)</.exec(html);
  if (!match) throw new Error('no secret on the page');
  return match[1]!;
}

async function enrolThroughPage(agent: TestAgent, csrf: string, query = '') {
  const setup = await agent.post(`/account/totp/setup${query}`).type('form').send({ csrf });
  expect(setup.status).toBe(303);
  const page = await agent.get(setup.headers.location);
  const secret = secretOf(page.text);
  const confirm = await agent
    .post(`/account/totp/confirm${query}`)
    .type('form')
    .send({ csrf, code: totpCode(t, secret) });
  nextStep(t);
  return { page, confirm, secret };
}

describe('GET /account', () => {
  test('not signed in -> 303 to the sign-in page, coming back here', async () => {
    const res = await request(t.app).get('/account');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/login?${new URLSearchParams({ return_to: 'http://sso.test/account' })}`);
  });

  test('signed in: every section, labelled fields, CSRF fields, no-store, only same-origin scripts', async () => {
    const { user, agent } = await signedInAgent();
    const res = await agent.get('/account');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toMatch(/no-store/);
    for (const text of [
      'Profile',
      'Password',
      'Second factors and passkeys',
      'Authenticator app',
      'Passkeys',
      'Recovery codes',
      'Sessions',
      'Connected apps',
    ]) {
      expect(res.text).toContain(text);
    }
    expect(res.text).toContain(user.email);
    for (const id of ['first_name', 'last_name', 'current_password', 'new_password', 'new_password_confirm', 'passkey_name']) {
      expect(res.text).toContain(`<label for="${id}">`);
      expect(res.text).toContain(`id="${id}"`);
    }
    expect(res.text).toContain('<strong>This browser</strong>');
    expect((res.text.match(/name="csrf"/g) ?? []).length).toBeGreaterThan(5);
    expect(res.text).not.toMatch(/<script>/);
    expect(res.text).toContain('<script src="/static/passkeys.js" defer></script>');
  });
});

describe('account forms', () => {
  test('profile: saved and shown; an empty name -> 400 with the error', async () => {
    const { user, agent, csrf } = await signedInAgent();
    const res = await agent.post('/account/profile').type('form').send({ csrf, first_name: ' Grace ', last_name: 'Hopper' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/account?done=profile');
    expect((await t.db('users').where({ id: user.id }).first()).first_name).toBe('Grace');
    expect((await agent.get(res.headers.location)).text).toContain('Your profile was saved.');
    const bad = await agent.post('/account/profile').type('form').send({ csrf, first_name: '', last_name: 'Hopper' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('id="profile-error"');
  });

  test('password: mismatch -> 400, wrong current -> 403, right -> 303 and other sessions signed out', async () => {
    const { user, agent, csrf } = await signedInAgent();
    const other = await signIn(t, user);
    const mismatch = await agent
      .post('/account/password')
      .type('form')
      .send({ csrf, current_password: user.password, new_password: 'new-pass-1', new_password_confirm: 'new-pass-2' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toContain('The two new passwords are not the same.');
    const wrong = await agent
      .post('/account/password')
      .type('form')
      .send({ csrf, current_password: 'nope-nope', new_password: 'new-pass-1', new_password_confirm: 'new-pass-1' });
    expect(wrong.status).toBe(403);
    expect(wrong.text).toContain('The current password is not correct.');
    const ok = await agent
      .post('/account/password')
      .type('form')
      .send({ csrf, current_password: user.password, new_password: 'new-pass-1', new_password_confirm: 'new-pass-1' });
    expect(ok.status).toBe(303);
    expect((await other.agent.get('/api/auth/me')).status).toBe(401);
    expect((await agent.get('/api/auth/me')).status).toBe(200);
  });

  test('no CSRF field, or a foreign Origin -> 403 and nothing changes', async () => {
    const { user, agent, csrf } = await signedInAgent();
    expect((await agent.post('/account/profile').type('form').send({ first_name: 'X', last_name: 'Y' })).status).toBe(403);
    expect(
      (await agent.post('/account/profile').set('Origin', 'https://evil.test').type('form').send({ csrf, first_name: 'X', last_name: 'Y' }))
        .status,
    ).toBe(403);
    expect((await t.db('users').where({ id: user.id }).first()).first_name).toBe('Test');
  });

  test('sessions: revoke one, revoke the others; a foreign id -> 404', async () => {
    const { user, agent, csrf } = await signedInAgent();
    const phone = await signIn(t, user);
    const tablet = await signIn(t, user);
    const phoneSid = t.ctx.jwt.verifyAccess(phone.accessToken, t.clock.now())!.sid;
    const one = await agent.post('/account/sessions/revoke').type('form').send({ csrf, session_id: phoneSid });
    expect(one.status).toBe(303);
    expect(one.headers.location).toBe('/account?done=session#sessions');
    expect((await phone.agent.get('/api/auth/me')).status).toBe(401);
    expect((await tablet.agent.get('/api/auth/me')).status).toBe(200);
    const stranger = await signIn(t, await makeUser(t));
    const foreign = await agent
      .post('/account/sessions/revoke')
      .type('form')
      .send({ csrf, session_id: t.ctx.jwt.verifyAccess(stranger.accessToken, t.clock.now())!.sid });
    expect(foreign.status).toBe(404);
    const others = await agent.post('/account/sessions/revoke-others').type('form').send({ csrf });
    expect(others.status).toBe(303);
    expect((await tablet.agent.get('/api/auth/me')).status).toBe(401);
    expect((await agent.get('/api/auth/me')).status).toBe(200);
  });

  test('connected apps: listed and removed', async () => {
    const { agent, csrf } = await signedInAgent();
    const client = await makeClient(t, { name: 'Wiki' });
    const { code, verifier } = await obtainCode(agent, client);
    expect((await exchangeCode(t, client, { code, verifier })).status).toBe(200);
    const page = await agent.get('/account');
    expect(page.text).toContain('<strong>Wiki</strong>');
    expect(page.text).toContain('App: Wiki');
    const res = await agent.post('/account/apps/remove').type('form').send({ csrf, client_id: client.clientId });
    expect(res.status).toBe(303);
    expect((await agent.get('/account')).text).toContain('No app has access to your account.');
  });

  test('TOTP: setup shows a QR code (inline SVG) and the secret as text; confirm shows 10 recovery codes once; remove with a code', async () => {
    const { user, agent, csrf } = await signedInAgent();
    const { page, confirm, secret } = await enrolThroughPage(agent, csrf);
    expect(page.text).toMatch(/<div class="qr" role="img" aria-label="[^"]+"><svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(confirm.status).toBe(200);
    const codes = [...confirm.text.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]);
    expect(codes).toHaveLength(10);
    expect(confirm.text).toContain('shown only once');
    const again = await agent.get('/account');
    expect(again.text).not.toContain(codes[0]!);
    expect(again.text).toContain('10 unused recovery codes left.');
    const login = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password });
    expect(login.body.error).toBe('mfa_required');

    const wrong = await agent
      .post('/account/totp/remove')
      .type('form')
      .send({ csrf, code: '000000' === totpCode(t, secret) ? '111111' : '000000' });
    expect(wrong.status).toBe(403);
    expect(wrong.text).toContain('id="second-factors-error"');
    const removed = await agent
      .post('/account/totp/remove')
      .type('form')
      .send({ csrf, code: totpCode(t, secret) });
    expect(removed.status).toBe(303);
    expect((await agent.get('/account')).text).toContain('Set up an authenticator app');
  });

  test('recovery codes: regenerate with the password on the page', async () => {
    const { user, agent, csrf } = await signedInAgent();
    await enrolThroughPage(agent, csrf);
    const wrong = await agent.post('/account/recovery-codes').type('form').send({ csrf, password: 'wrong-pass' });
    expect(wrong.status).toBe(403);
    const res = await agent.post('/account/recovery-codes').type('form').send({ csrf, password: user.password });
    expect(res.status).toBe(200);
    expect([...res.text.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)]).toHaveLength(10);
  });

  test('passkeys: added through the page form (as the script posts it), renamed, removed', async () => {
    const { agent, csrf } = await signedInAgent();
    const options = await agent.post('/api/auth/passkeys/register/options');
    const response = new SoftAuthenticator('http://sso.test').create(options.body);
    const added = await agent
      .post('/account/passkeys')
      .type('form')
      .send({ csrf, response: JSON.stringify(response), name: 'Work laptop' });
    // The account's first factor: its recovery codes are shown once, on the page itself (CONTRACT §11).
    expect(added.status).toBe(200);
    expect([...added.text.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)]).toHaveLength(10);
    const page = await agent.get('/account');
    expect(page.text).toContain('<strong>Work laptop</strong>');
    const id = /name="id" value="([0-9a-f-]{36})"/.exec(page.text)![1]!;
    expect((await agent.post('/account/passkeys/rename').type('form').send({ csrf, id, name: 'Desk' })).status).toBe(303);
    expect((await agent.get('/account')).text).toContain('<strong>Desk</strong>');
    expect((await agent.post('/account/passkeys/rename').type('form').send({ csrf, id, name: '' })).status).toBe(400);
    expect((await agent.post('/account/passkeys').type('form').send({ csrf, response: '{nope', name: 'x' })).status).toBe(400);
    expect((await agent.post('/account/passkeys/remove').type('form').send({ csrf, id })).status).toBe(303);
    expect((await agent.get('/account')).text).toContain('No passkey yet');
  });

  test('MFA_REQUIRED_FOR_ADMINS: the enrolment notice, then a Continue link to where the admin was going', async () => {
    const { agent, csrf } = await signedInAgent(['admin']);
    const returnTo = 'http://sso.test/consent?request_id=00000000-0000-4000-8000-000000000000';
    const query = `?${new URLSearchParams({ enrol: 'required', return_to: returnTo })}`;
    const page = await agent.get(`/account${query}`);
    expect(page.text).toContain('Your role requires a second factor');
    expect(page.text).toContain('action="/account/totp/setup?enrol=required&amp;return_to=http%3A%2F%2Fsso.test%2Fconsent');
    const { confirm } = await enrolThroughPage(agent, csrf, query);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(`<a href="${returnTo}">Continue</a>`);
    expect((await agent.get('/api/users')).status).toBe(200);
  });
});
