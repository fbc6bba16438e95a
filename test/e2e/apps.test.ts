import request from 'supertest';
import { makeClient, makeUser, signIn } from '../helpers/factories';
import { issueOAuthTokens, obtainCode, exchangeCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const me = (accessToken: string) => request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${accessToken}`);

describe('GET /api/auth/apps', () => {
  test('lists the approved apps with name, scopes, granted_at and last_used_at', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const notes = await makeClient(t, { name: 'Notes' });
    const photos = await makeClient(t, { name: 'Photos' });
    await issueOAuthTokens(t, agent, notes, { scope: 'openid email' });
    await obtainCode(agent, photos, { scope: 'profile' });
    const res = await agent.get('/api/auth/apps');
    expect(res.status).toBe(200);
    const byId = Object.fromEntries(res.body.apps.map((a: { client_id: string }) => [a.client_id, a]));
    expect(Object.keys(byId).sort()).toEqual([notes.clientId, photos.clientId].sort());
    expect(byId[notes.clientId]).toEqual({
      client_id: notes.clientId,
      name: 'Notes',
      scopes: ['openid', 'email'],
      granted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      last_used_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(byId[photos.clientId]).toMatchObject({ name: 'Photos', scopes: ['profile'], last_used_at: null });
  });

  test("does not show another user's apps", async () => {
    const other = await signIn(t, await makeUser(t));
    await obtainCode(other.agent, await makeClient(t));
    const mine = await signIn(t, await makeUser(t));
    const res = await mine.agent.get('/api/auth/apps');
    expect(res.body).toEqual({ apps: [], saml_apps: [] });
  });

  test('requires authentication', async () => {
    expect((await request(t.app).get('/api/auth/apps')).status).toBe(401);
  });
});

describe('DELETE /api/auth/apps/:clientId', () => {
  test("204: grant dropped and that app's tokens for this user revoked; other sessions untouched", async () => {
    const user = await makeUser(t);
    const { agent, accessToken: firstParty } = await signIn(t, user);
    const app = await makeClient(t);
    const otherApp = await makeClient(t);
    const tokens = await issueOAuthTokens(t, agent, app);
    const otherTokens = await issueOAuthTokens(t, agent, otherApp);
    const pending = await obtainCode(agent, app);

    const res = await agent.delete(`/api/auth/apps/${app.clientId}`);
    expect(res.status).toBe(204);
    expect(await t.db('oauth_grants').where({ user_id: user.id, client_id: app.clientId })).toHaveLength(0);
    expect((await me(tokens.access_token)).status).toBe(401);
    expect((await me(otherTokens.access_token)).status).toBe(200);
    expect((await me(firstParty)).status).toBe(200);
    expect((await exchangeCode(t, app, { code: pending.code, verifier: pending.verifier })).body.error).toBe('invalid_grant');
    const list = await agent.get('/api/auth/apps');
    expect(list.body.apps.map((a: { client_id: string }) => a.client_id)).toEqual([otherApp.clientId]);
  });

  test("other users' sessions with the same app stay valid", async () => {
    const app = await makeClient(t);
    const a = await signIn(t, await makeUser(t));
    const b = await signIn(t, await makeUser(t));
    await issueOAuthTokens(t, a.agent, app);
    const bTokens = await issueOAuthTokens(t, b.agent, app);
    expect((await a.agent.delete(`/api/auth/apps/${app.clientId}`)).status).toBe(204);
    expect((await me(bTokens.access_token)).status).toBe(200);
  });

  test('no grant -> 404; after removal the app asks for consent again', async () => {
    const { agent } = await signIn(t, await makeUser(t));
    const app = await makeClient(t);
    expect((await agent.delete(`/api/auth/apps/${app.clientId}`)).status).toBe(404);
    expect((await agent.delete('/api/auth/apps/%20')).status).toBe(404);
    await obtainCode(agent, app);
    await agent.delete(`/api/auth/apps/${app.clientId}`);
    expect((await agent.delete(`/api/auth/apps/${app.clientId}`)).status).toBe(404);
  });

  test('a token issued to an OAuth client cannot manage connected apps', async () => {
    const { agent } = await signIn(t, await makeUser(t));
    const app = await makeClient(t);
    const tokens = await issueOAuthTokens(t, agent, app);
    const res = await request(t.app).delete(`/api/auth/apps/${app.clientId}`).set('Authorization', `Bearer ${tokens.access_token}`);
    expect(res.status).toBe(403);
  });
});
