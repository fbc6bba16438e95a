import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { enrolTotp, nextStep, totpCode } from '../helpers/mfa';
import { authorizeParams, authorizePath, csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

function sessionCookies(res: request.Response): string[] {
  return ((res.headers['set-cookie'] as unknown as string[] | undefined) ?? []).filter((c) => /^(accessToken|refreshToken)=/.test(c));
}

function hiddenField(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no ${name} field`);
  return match[1]!;
}

async function userWithTotp() {
  const user = await makeUser(t);
  const { secret, recoveryCodes } = await enrolTotp(t, (await signIn(t, user)).agent);
  return { user, secret, recoveryCodes };
}

/** The hosted password step for a TOTP user: the second-step page, its csrf and mfa_token. */
async function passwordPage(agent: TestAgent, user: { email: string; password: string }, returnTo = '') {
  const csrf = await csrfFrom(agent, `/login${returnTo ? `?${new URLSearchParams({ return_to: returnTo })}` : ''}`);
  const res = await agent.post('/login').type('form').send({ email: user.email, password: user.password, return_to: returnTo, csrf });
  return { res, csrf: hiddenField(res.text, 'csrf'), mfaToken: hiddenField(res.text, 'mfa_token') };
}

describe('hosted /login with a second factor', () => {
  test('the password step shows the second step: code field, recovery code, no session cookie', async () => {
    const { user } = await userWithTotp();
    const { res, mfaToken } = await passwordPage(request.agent(t.app), user);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain('Confirm it is you');
    expect(res.text).toContain('<label for="code">Code from your authenticator app</label>');
    expect(res.text).toContain('autocomplete="one-time-code"');
    expect(res.text).toContain('<summary>Use a recovery code</summary>');
    expect(res.text).not.toContain('Use a passkey');
    expect(mfaToken.length).toBeGreaterThanOrEqual(43);
    expect(sessionCookies(res)).toEqual([]);
  });

  test('right code -> session cookies and 303 to the return_to', async () => {
    const { user, secret } = await userWithTotp();
    const client = await makeClient(t);
    const returnTo = `http://sso.test${authorizePath(authorizeParams(client).params)}`;
    const agent = request.agent(t.app);
    const { csrf, mfaToken } = await passwordPage(agent, user, returnTo);
    const res = await agent
      .post('/login/mfa')
      .type('form')
      .send({ csrf, mfa_token: mfaToken, return_to: returnTo, code: totpCode(t, secret) });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(returnTo);
    expect(sessionCookies(res)).toHaveLength(2);
    // The authorize flow goes on signed in: the consent page.
    const authorize = await agent.get(returnTo.replace('http://sso.test', ''));
    expect(authorize.status).toBe(302);
    expect(authorize.headers.location).toMatch(/^http:\/\/sso\.test\/consent\?request_id=/);
    const me = await agent.get('/api/auth/me');
    expect(me.body.user.amr).toEqual(['pwd', 'otp']);
  });

  test('wrong code -> 401 page with the error and the same step; then the right code works', async () => {
    const { user, secret } = await userWithTotp();
    const agent = request.agent(t.app);
    const { csrf, mfaToken } = await passwordPage(agent, user);
    const wrong = await agent
      .post('/login/mfa')
      .type('form')
      .send({ csrf, mfa_token: mfaToken, code: '000000' === totpCode(t, secret) ? '111111' : '000000' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('That code is not valid');
    expect(wrong.text).toContain('role="alert"');
    expect(hiddenField(wrong.text, 'mfa_token')).toBe(mfaToken);
    const ok = await agent
      .post('/login/mfa')
      .type('form')
      .send({ csrf, mfa_token: mfaToken, code: totpCode(t, secret) });
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('/login');
  });

  test('a recovery code through the page', async () => {
    const { user, recoveryCodes } = await userWithTotp();
    const agent = request.agent(t.app);
    const { csrf, mfaToken } = await passwordPage(agent, user);
    const res = await agent.post('/login/mfa').type('form').send({ csrf, mfa_token: mfaToken, recovery_code: recoveryCodes[0] });
    expect(res.status).toBe(303);
    expect((await agent.get('/api/auth/me')).body.user.amr).toEqual(['pwd', 'rec']);
  });

  test('an expired step sends back to the password form; no csrf -> 403; nothing filled in -> 400', async () => {
    const { user, secret } = await userWithTotp();
    const agent = request.agent(t.app);
    const { csrf, mfaToken } = await passwordPage(agent, user);
    expect(
      (
        await agent
          .post('/login/mfa')
          .type('form')
          .send({ mfa_token: mfaToken, code: totpCode(t, secret) })
      ).status,
    ).toBe(403);
    const empty = await agent.post('/login/mfa').type('form').send({ csrf, mfa_token: mfaToken });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('Enter the code');
    t.clock.advance(301);
    nextStep(t);
    const expired = await agent
      .post('/login/mfa')
      .type('form')
      .send({ csrf, mfa_token: mfaToken, code: totpCode(t, secret) });
    expect(expired.status).toBe(401);
    expect(expired.text).toContain('This sign-in has expired');
    expect(expired.text).toContain('<label for="password">');
    expect(sessionCookies(expired)).toEqual([]);
  });

  test('the sign-in page offers a passkey (script-driven) and the signed-in page links to /account', async () => {
    const page = await request(t.app).get('/login');
    expect(page.text).toContain('data-passkey-login="passkey-login-form"');
    expect(page.text).toContain('<script src="/static/simplewebauthn-browser.js" defer></script>');
    const script = await request(t.app).get('/static/simplewebauthn-browser.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(script.text).toContain('SimpleWebAuthnBrowser');
    expect((await request(t.app).get('/static/passkeys.js')).text).toContain('data-passkey-register');
    const { agent } = await signIn(t, await makeUser(t));
    const signedIn = await agent.get('/login');
    expect(signedIn.text).toContain('<a href="/account">Manage your account</a>');
  });
});
