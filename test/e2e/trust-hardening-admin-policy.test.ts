import request from 'supertest';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { enrolTotp, signInWithTotp } from '../helpers/mfa';
import { csrfFrom } from '../helpers/oauth';
import { makeRole, makeUserWithPermissions } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §23 "Admin policy by permission" (issue 30, two low findings): MFA_REQUIRED_FOR_ADMINS holds every caller
 * with an admin permission whatever their role is called, and a client's `is_active` changes only with
 * `oauth_clients:delete`.
 */
let t: TestApp;
let strict: TestApp;
beforeAll(async () => {
  [t, strict] = await Promise.all([createTestApp(), createTestApp({ env: { MFA_REQUIRED_FOR_ADMINS: 'true' } })]);
});
afterAll(async () => {
  await Promise.all([t.close(), strict.close()]);
});

describe('PUT /api/admin/oauth-clients/:id with is_active', () => {
  test.each([false, true])('is_active %s with oauth_clients:write only: 403 in the contract shape, nothing changes', async (value) => {
    const client = await makeClient(t, { isActive: !value });
    const writer = await makeUserWithPermissions(t, ['oauth_clients:read', 'oauth_clients:write']);
    const res = await request(t.app)
      .put(`/api/admin/oauth-clients/${client.clientId}`)
      .set('Authorization', writer.bearer)
      .send({ is_active: value });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'forbidden', message: expect.stringMatching(/oauth_clients:delete/) });
    expect((await t.db('oauth_clients').where({ client_id: client.clientId }).first()).is_active).toBe(!value);
    // The other fields stay editable with oauth_clients:write.
    const renamed = await request(t.app)
      .put(`/api/admin/oauth-clients/${client.clientId}`)
      .set('Authorization', writer.bearer)
      .send({ name: 'Renamed' });
    expect(renamed.status).toBe(200);
  });

  test.each([false, true])('is_active %s with oauth_clients:write and oauth_clients:delete: changed', async (value) => {
    const client = await makeClient(t, { isActive: !value });
    const deleter = await makeUserWithPermissions(t, ['oauth_clients:write', 'oauth_clients:delete']);
    const res = await request(t.app)
      .put(`/api/admin/oauth-clients/${client.clientId}`)
      .set('Authorization', deleter.bearer)
      .send({ is_active: value });
    expect(res.status).toBe(200);
    expect(res.body.client.is_active).toBe(value);
  });

  test('the console: the edit form cannot change it, and deactivation needs oauth_clients:delete', async () => {
    const client = await makeClient(t);
    // The console opens to the admin tier: a manager who also holds the clients' read and write permissions.
    const writer = await makeUserWithPermissions(t, ['oauth_clients:read', 'oauth_clients:write']);
    await t
      .db('user_roles')
      .insert({ user_id: writer.user.id, role_id: (await t.db('roles').where({ name: 'manager', application: null }).first()).id });
    const agent = writer.agent;
    const csrf = await csrfFrom(agent, `/admin/applications/${client.clientId}`);
    const deactivate = await agent.post(`/admin/applications/${client.clientId}/deactivate`).type('form').send({ csrf, confirm: 'yes' });
    expect(deactivate.status).toBe(403);
    const edit = await agent
      .post(`/admin/applications/${client.clientId}`)
      .type('form')
      .send({
        csrf,
        name: 'Edited',
        redirect_uris: client.redirectUris.join('\n'),
        post_logout_redirect_uris: '',
        grant_types: client.grantTypes,
        scopes: client.scopes,
        allowed_resources: [],
        is_active: 'false',
      });
    expect([edit.status, edit.status === 303 ? '' : edit.text]).toEqual([303, '']);
    expect((await t.db('oauth_clients').where({ client_id: client.clientId }).first()).is_active).toBe(true);
  });
});

describe('MFA_REQUIRED_FOR_ADMINS judged by permissions', () => {
  test('a custom role holding an admin permission (no admin-tier name) is held until a second factor', async () => {
    const role = await makeRole(strict, { name: 'helpdesk', permissions: ['users:read'] });
    const user = await makeUser(strict);
    await strict.db('user_roles').insert({ user_id: user.id, role_id: role.id });
    const { accessToken, agent } = await signIn(strict, user);
    const res = await request(strict.app).get('/api/users').set('Authorization', `Bearer ${accessToken}`);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('mfa_required');

    const { secret } = await enrolTotp(strict, agent);
    const withTotp = await signInWithTotp(strict, user, secret);
    expect((await request(strict.app).get('/api/users').set('Authorization', `Bearer ${withTotp.accessToken}`)).status).toBe(200);
  });

  test('a custom role without permissions is not held (ordinary 403 forbidden)', async () => {
    const role = await makeRole(strict, { name: 'reader', permissions: [] });
    const user = await makeUser(strict);
    await strict.db('user_roles').insert({ user_id: user.id, role_id: role.id });
    const { accessToken } = await signIn(strict, user);
    const res = await request(strict.app).get('/api/users').set('Authorization', `Bearer ${accessToken}`);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });
});
