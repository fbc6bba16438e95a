import request from 'supertest';
import { startSession } from '../../src/services/sessions.service';
import { makeClient, makeUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** An access token as the OAuth token endpoint issues it: bound to a client and a scope. */
async function oauthTokenFor(roles: string[]) {
  const user = await makeUser(t, { roles });
  const client = await makeClient(t, { scopes: ['openid', 'profile', 'email', 'read', 'admin'] });
  const tokens = await startSession(t.ctx, t.db, { user, client: { clientId: client.clientId, scope: 'openid profile email read admin' } });
  return { user, client, bearer: `Bearer ${tokens.accessToken}` };
}

describe('access tokens issued to OAuth clients', () => {
  test('may read the identity: /api/auth/me, verify-admin, userinfo', async () => {
    const { user, bearer } = await oauthTokenFor(['super_admin']);
    const me = await request(t.app).get('/api/auth/me').set('Authorization', bearer);
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(user.id);
    await request(t.app).get('/api/auth/verify-admin').set('Authorization', bearer).expect(200);
    await request(t.app).get('/api/oauth/userinfo').set('Authorization', bearer).expect(200);
  });

  test.each([
    ['get', '/api/auth/sessions'],
    ['post', '/api/auth/sessions/revoke-others'],
    ['post', '/api/auth/change-password'],
    ['put', '/api/auth/me'],
    ['get', '/api/auth/apps'],
    ['get', '/api/users'],
    ['get', '/api/rbac/roles'],
    ['get', '/api/admin/summary'],
    ['post', '/api/admin/oauth-clients'],
    ['get', '/api/oauth/consent-info?request_id=00000000-0000-4000-8000-000000000000'],
    ['post', '/api/oauth/authorize/approve'],
  ])('are refused (403) at %s %s, even for a super_admin', async (method, path) => {
    const { bearer } = await oauthTokenFor(['super_admin']);
    const res = await (request(t.app) as unknown as Record<string, (p: string) => request.Test>)[method]!(path)
      .set('Authorization', bearer)
      .send({});
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  test('do not count as a signed-in browser at /api/oauth/authorize', async () => {
    const { bearer, client } = await oauthTokenFor([]);
    const res = await request(t.app)
      .get('/api/oauth/authorize')
      .query({
        response_type: 'code',
        client_id: client.clientId,
        redirect_uri: client.redirectUris[0],
        scope: 'openid admin',
        state: 'xyz',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })
      .set('Authorization', bearer);
    expect(res.status).toBe(302);
    expect(res.headers.location).toMatch(/^http:\/\/sso\.test\/login\?return_to=/);
    expect(await t.db('oauth_authorization_requests').count('* as n').first()).toEqual({ n: '0' });
  });

  test('logout with such a token ends only that app session', async () => {
    const { bearer } = await oauthTokenFor([]);
    await request(t.app).post('/api/auth/logout').set('Authorization', bearer).expect(200);
    await request(t.app).get('/api/auth/me').set('Authorization', bearer).expect(401);
  });
});
