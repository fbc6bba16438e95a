import request from 'supertest';
import { startSession } from '../../src/services/sessions.service';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { basicAuth, exchangeCode, issueOAuthTokens, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
let adminBearer: string;
beforeAll(async () => {
  t = await createTestApp();
  adminBearer = (await makeSignedInUser(t, ['super_admin'])).bearer;
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);
type Client = Awaited<ReturnType<typeof makeClient>>;
const refreshGrant = (client: Client, refreshToken: string) =>
  api()
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(client.clientId, client.clientSecret))
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: refreshToken });
const updateClient = (client: Client, body: Record<string, unknown>) =>
  api().put(`/api/admin/oauth-clients/${client.clientId}`).set('Authorization', adminBearer).send(body).expect(200);

async function signedInAgent() {
  return (await signIn(t, await makeUser(t, { firstName: 'Grace', lastName: 'Hopper' }))).agent;
}

describe('client changes reach live grants (CONTRACT §8)', () => {
  test('a scope removed from the client narrows the next refresh; none left -> invalid_scope and nothing burned', async () => {
    const client = await makeClient(t, { scopes: ['openid', 'profile', 'email'] });
    const tokens = await issueOAuthTokens(t, await signedInAgent(), client, { scope: 'openid profile email' });
    await updateClient(client, { scopes: ['openid', 'email', 'read'] });

    const narrowed = await refreshGrant(client, tokens.refresh_token);
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe('openid email');
    const info = await api().get('/api/oauth/userinfo').set('Authorization', `Bearer ${narrowed.body.access_token}`).expect(200);
    expect(info.body.email).toBeDefined();
    expect(info.body.name).toBeUndefined();

    await updateClient(client, { scopes: ['read'] });
    const none = await refreshGrant(client, narrowed.body.refresh_token);
    expect(none.status).toBe(400);
    expect(none.body.error).toBe('invalid_scope');
    // Refused before rotation: once the client is registered for the scope again, the same token still works.
    await updateClient(client, { scopes: ['openid', 'email'] });
    expect((await refreshGrant(client, narrowed.body.refresh_token)).status).toBe(200);
  });

  test('a redirect URI removed from the client invalidates the outstanding code', async () => {
    const client = await makeClient(t, { redirectUris: ['https://app.test/old', 'https://app.test/new'] });
    const { code, verifier } = await obtainCode(await signedInAgent(), client);
    await updateClient(client, { redirect_uris: ['https://app.test/new'] });
    const res = await exchangeCode(t, client, { code, verifier, redirectUri: 'https://app.test/old' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  test('a deactivated client: its access tokens are refused at /me and userinfo at once, its refresh tokens fail', async () => {
    const client = await makeClient(t);
    const tokens = await issueOAuthTokens(t, await signedInAgent(), client);
    const bearer = `Bearer ${tokens.access_token}`;
    await api().get('/api/auth/me').set('Authorization', bearer).expect(200);
    // Flip the flag alone (as a replica lagging behind the session revocation, or a direct SQL change would):
    // the live check itself refuses the token.
    await t.db('oauth_clients').where({ client_id: client.clientId }).update({ is_active: false });
    expect((await api().get('/api/auth/me').set('Authorization', bearer)).status).toBe(401);
    expect((await api().get('/api/oauth/userinfo').set('Authorization', bearer)).status).toBe(401);
    expect((await refreshGrant(client, tokens.refresh_token)).status).toBe(401);
    await t.db('oauth_clients').where({ client_id: client.clientId }).update({ is_active: true });
    await api().get('/api/auth/me').set('Authorization', bearer).expect(200);
  });
});

describe('client tokens see only their scopes at /api/auth/me and /verify-admin (CONTRACT §8)', () => {
  async function clientToken(scope: string, roles: string[] = ['admin']) {
    const user = await makeUser(t, { roles });
    const client = await makeClient(t, { scopes: ['openid', 'profile', 'email', 'read'] });
    const tokens = await startSession(t.ctx, t.db, { user, client: { clientId: client.clientId, scope } });
    return { user, bearer: `Bearer ${tokens.accessToken}` };
  }

  test.each([
    ['openid', ['id', 'is_active']],
    ['openid email', ['email', 'email_verified', 'id', 'is_active']],
    ['openid profile', ['first_name', 'id', 'is_active', 'last_name', 'name']],
    ['openid read', ['adminRole', 'amr', 'id', 'is_active', 'permissions', 'roles']],
  ])('scope "%s" -> user fields %j', async (scope, fields) => {
    const { user, bearer } = await clientToken(scope);
    const me = await api().get('/api/auth/me').set('Authorization', bearer).expect(200);
    expect(Object.keys(me.body.user).sort()).toEqual(fields);
    expect(me.body.user.id).toBe(user.id);
  });

  test('verify-admin with a client token needs the read scope', async () => {
    const without = await clientToken('openid profile email');
    const refused = await api().get('/api/auth/verify-admin').set('Authorization', without.bearer);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    const withRead = await clientToken('openid read');
    const ok = await api().get('/api/auth/verify-admin').set('Authorization', withRead.bearer).expect(200);
    expect(ok.body.user.adminRole).toBe('admin');
    expect(ok.body.user.email).toBeUndefined();
  });

  test('first-party tokens are unchanged: every field', async () => {
    const { bearer } = await makeSignedInUser(t, ['manager']);
    const me = await api().get('/api/auth/me').set('Authorization', bearer).expect(200);
    expect(Object.keys(me.body.user)).toEqual(
      expect.arrayContaining([
        'id',
        'email',
        'name',
        'first_name',
        'last_name',
        'roles',
        'permissions',
        'adminRole',
        'is_active',
        'email_verified',
      ]),
    );
    await api().get('/api/auth/verify-admin').set('Authorization', bearer).expect(200);
  });
});
