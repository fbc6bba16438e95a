import request from 'supertest';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { enrolTotp, signInWithTotp, totpCode } from '../helpers/mfa';
import { authorizeParams, authorizePath, csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
let relaxed: TestApp;
beforeAll(async () => {
  [t, relaxed] = await Promise.all([createTestApp({ env: { MFA_REQUIRED_FOR_ADMINS: 'true' } }), createTestApp()]);
});
afterAll(async () => {
  await Promise.all([t.close(), relaxed.close()]);
});

// Issue 19: every /api/admin/* route, the audit listing included (the policy is the administration scope's).
const ADMIN_ENDPOINTS = ['/api/users', '/api/rbac/roles', '/api/admin/summary', '/api/admin/audit-events'];

describe('MFA_REQUIRED_FOR_ADMINS=true', () => {
  test.each(['super_admin', 'admin'])(
    '%s signed in with the password only: 403 mfa_required on users, RBAC and admin APIs',
    async (role) => {
      const user = await makeUser(t, { roles: [role] });
      const { accessToken } = await signIn(t, user);
      for (const path of ADMIN_ENDPOINTS) {
        const res = await request(t.app).get(path).set('Authorization', `Bearer ${accessToken}`);
        expect(res.status).toBe(403);
        expect(res.body.error).toBe('mfa_required');
      }
      // Their own account stays reachable, so they can enrol.
      expect((await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`)).status).toBe(200);
      expect((await request(t.app).post('/api/auth/mfa/totp/setup').set('Authorization', `Bearer ${accessToken}`)).status).toBe(200);
    },
  );

  test('a manager (admin tier) is held too; a plain user still gets the ordinary 403 forbidden', async () => {
    const manager = await makeUser(t, { roles: ['manager'] });
    const m = await signIn(t, manager);
    const res = await request(t.app).get('/api/users').set('Authorization', `Bearer ${m.accessToken}`);
    expect(res.body.error).toBe('mfa_required');
    const plain = await signIn(t, await makeUser(t));
    const res2 = await request(t.app).get('/api/users').set('Authorization', `Bearer ${plain.accessToken}`);
    expect(res2.status).toBe(403);
    expect(res2.body.error).toBe('forbidden');
  });

  test('an admin who signed in with TOTP passes', async () => {
    const user = await makeUser(t, { roles: ['admin'] });
    const first = await signIn(t, user);
    const { secret } = await enrolTotp(t, first.agent);
    const { accessToken } = await signInWithTotp(t, user, secret);
    for (const path of ADMIN_ENDPOINTS) {
      const res = await request(t.app).get(path).set('Authorization', `Bearer ${accessToken}`);
      expect(res.status).toBe(200);
    }
  });

  test('enrolling on the held session proves the factor: that session passes at once', async () => {
    const user = await makeUser(t, { roles: ['admin'] });
    const { agent } = await signIn(t, user);
    expect((await agent.get('/api/users')).status).toBe(403);
    await enrolTotp(t, agent);
    expect((await agent.get('/api/users')).status).toBe(200);
    const me = await agent.get('/api/auth/me');
    expect(me.body.user.amr).toEqual(['pwd', 'otp']);
  });

  test('hosted pages: a password-only admin is walked to enrolment, keeping the OAuth flow', async () => {
    const user = await makeUser(t, { roles: ['admin'] });
    const client = await makeClient(t);
    const agent = request.agent(t.app);
    const returnTo = `http://sso.test${authorizePath(authorizeParams(client).params)}`;
    const csrf = await csrfFrom(agent, `/login?${new URLSearchParams({ return_to: returnTo })}`);
    const res = await agent.post('/login').type('form').send({ email: user.email, password: user.password, return_to: returnTo, csrf });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.location, 'http://sso.test');
    expect(location.pathname).toBe('/account');
    expect(location.searchParams.get('enrol')).toBe('required');
    expect(location.searchParams.get('return_to')).toBe(returnTo);
    // The signed-in page and the authorize endpoint itself (issue 30: before any consent or grant) send them there too.
    const signedIn = await agent.get('/login');
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.location).toMatch(/^\/account\?enrol=required/);
    const authorize = await agent.get(returnTo.replace('http://sso.test', ''));
    expect(authorize.status).toBe(302);
    expect(authorize.headers.location).toBe(
      `http://sso.test/account?${new URLSearchParams({ enrol: 'required', return_to: returnTo })}#second-factors`,
    );
  });

  test('a non-admin signs in through the page as usual', async () => {
    const user = await makeUser(t);
    const agent = request.agent(t.app);
    const csrf = await csrfFrom(agent, '/login');
    const res = await agent.post('/login').type('form').send({ email: user.email, password: user.password, csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login');
  });

  test('a TOTP code stays single-use under the policy too', async () => {
    const user = await makeUser(t, { roles: ['admin'] });
    const first = await signIn(t, user);
    const { secret } = await enrolTotp(t, first.agent);
    const code = totpCode(t, secret);
    const a = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password });
    const ok = await request(t.app).post('/api/auth/login/mfa').send({ mfa_token: a.body.mfa_token, code });
    expect(ok.status).toBe(200);
    const b = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password });
    expect((await request(t.app).post('/api/auth/login/mfa').send({ mfa_token: b.body.mfa_token, code })).status).toBe(401);
  });
});

describe('MFA_REQUIRED_FOR_ADMINS unset (default false)', () => {
  test('a password-only admin uses the admin APIs as before', async () => {
    const user = await makeUser(relaxed, { roles: ['admin'] });
    const { accessToken } = await signIn(relaxed, user);
    for (const path of ADMIN_ENDPOINTS) {
      expect((await request(relaxed.app).get(path).set('Authorization', `Bearer ${accessToken}`)).status).toBe(200);
    }
  });
});
