import request from 'supertest';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { authorizeParams, authorizePath, csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { updateClient } from '../../src/services/oauth/clients.service';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** A signed-in user with a pending request of a client registered with two callbacks (the first one is used). */
async function pendingRequest(scope = 'openid email') {
  const { agent } = await signIn(t, await makeUser(t));
  const client = await makeClient(t, {
    redirectUris: ['https://app.test/callback', 'https://app.test/other'],
    scopes: ['openid', 'profile', 'email', 'admin'],
  });
  const { params } = authorizeParams(client, { scope });
  const res = await agent.get(authorizePath(params));
  const requestId = new URL(res.headers.location).searchParams.get('request_id')!;
  return { agent, client, requestId };
}

async function codesOf(clientId: string): Promise<number> {
  const [{ n }] = await t.db('oauth_codes').where({ client_id: clientId }).count({ n: '*' });
  return Number(n);
}

describe('consent re-checks the client registration (RFC 6749 §3.1.2, §4.1.2.1: never redirect to an unverified URI)', () => {
  test('redirect URI removed from the client while the request was pending: approve and deny -> 404, no code, no redirect', async () => {
    const p = await pendingRequest();
    await updateClient(t.ctx, p.client.clientId, { redirectUris: ['https://app.test/other'] });

    expect((await p.agent.get(`/api/oauth/consent-info?request_id=${p.requestId}`)).status).toBe(404);
    const approve = await p.agent.post('/api/oauth/authorize/approve').send({ request_id: p.requestId });
    expect(approve.status).toBe(404);
    expect(approve.body.redirect_url).toBeUndefined();
    const deny = await p.agent.post('/api/oauth/authorize/deny').send({ request_id: p.requestId });
    expect(deny.status).toBe(404);
    expect(deny.body.redirect_url).toBeUndefined();
    expect(await codesOf(p.client.clientId)).toBe(0);
    expect(await t.db('oauth_grants').where({ client_id: p.client.clientId }).first()).toBeUndefined();
  });

  test('scope removed from the client while the request was pending: approve -> 404, no code, no grant', async () => {
    const p = await pendingRequest('openid admin');
    await updateClient(t.ctx, p.client.clientId, { scopes: ['openid', 'profile', 'email'] });

    expect((await p.agent.get(`/api/oauth/consent-info?request_id=${p.requestId}`)).status).toBe(404);
    expect((await p.agent.post('/api/oauth/authorize/approve').send({ request_id: p.requestId })).status).toBe(404);
    expect(await codesOf(p.client.clientId)).toBe(0);
    expect(await t.db('oauth_grants').where({ client_id: p.client.clientId }).first()).toBeUndefined();
  });

  test('client deactivated while the request was pending: deny -> 404 (no redirect to its callback), API and page', async () => {
    const p = await pendingRequest();
    const csrf = await csrfFrom(p.agent, '/login?return_to=x');
    await updateClient(t.ctx, p.client.clientId, { isActive: false });

    const deny = await p.agent.post('/api/oauth/authorize/deny').send({ request_id: p.requestId });
    expect(deny.status).toBe(404);
    expect(deny.body.redirect_url).toBeUndefined();
    const page = await p.agent.post('/consent').type('form').send({ request_id: p.requestId, decision: 'deny', csrf });
    expect(page.status).toBe(404);
    expect(page.headers.location).toBeUndefined();
  });

  test('the registration unchanged: deny still redirects with access_denied', async () => {
    const p = await pendingRequest();
    const deny = await p.agent.post('/api/oauth/authorize/deny').send({ request_id: p.requestId });
    expect(deny.status).toBe(200);
    expect(new URL(deny.body.redirect_url).searchParams.get('error')).toBe('access_denied');
  });
});

describe('hosted form posts (login CSRF)', () => {
  test('POST /login from another origin is refused even with a matching csrf cookie and field (cookie tossing)', async () => {
    const user = await makeUser(t);
    // A sibling subdomain can plant a cookie on the parent domain, so the double-submit pair alone proves nothing.
    const planted = 'A'.repeat(43);
    const res = await request(t.app)
      .post('/login')
      .set('Origin', 'https://evil.sso.test')
      .set('Cookie', `csrf=${planted}`)
      .type('form')
      .send({ csrf: planted, email: user.email, password: user.password, return_to: '' });
    expect(res.status).toBe(403);
    const cookies = (res.headers['set-cookie'] as unknown as string[] | undefined) ?? [];
    expect(cookies.some((c) => c.startsWith('accessToken=') || c.startsWith('refreshToken='))).toBe(false);
  });

  test('POST /login from our own origin (what a browser sends) still signs in', async () => {
    const user = await makeUser(t);
    const agent = request.agent(t.app);
    const csrf = await csrfFrom(agent, '/login');
    const res = await agent
      .post('/login')
      .set('Origin', 'http://sso.test')
      .type('form')
      .send({ csrf, email: user.email, password: user.password, return_to: '' });
    expect(res.status).toBe(303);
    const cookies = (res.headers['set-cookie'] as unknown as string[] | undefined) ?? [];
    expect(cookies.some((c) => c.startsWith('accessToken='))).toBe(true);
  });
});

describe('hosted sign-in form and the per-IP limit', () => {
  test('POST /login counts against the same per-IP budget as /api (password spraying across addresses)', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_MAX: '3' } });
    try {
      const agent = request.agent(limited.app);
      const csrf = await csrfFrom(agent, '/login');
      const attempts: request.Response[] = [];
      for (let i = 0; i < 4; i++) {
        attempts.push(
          await agent
            .post('/login')
            .type('form')
            .send({ csrf, email: `spray-${i}@example.test`, password: 'Winter2025!', return_to: '' }),
        );
      }
      expect(attempts.map((r) => r.status)).toEqual([401, 401, 401, 429]);
      expect(Number(attempts[3]!.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});
