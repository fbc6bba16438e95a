import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 34 in the console: an application's back-channel logout address and `sid` flag in its form (create and edit,
 * refused by the API's own rules, the same words beside the field), and on its page the recent deliveries from
 * GET /api/admin/oauth-clients/:clientId/backchannel-logout-deliveries.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const RECEIVER = 'http://127.0.0.1:9/backchannel-logout';

async function adminAgent() {
  const s = await makeSignedInUser(t, ['super_admin']);
  return { ...s, csrf: await csrfFrom(s.agent, '/admin/applications/new?preset=custom') };
}

const fields = (extra: Record<string, unknown>) => ({
  name: 'Reports',
  type: 'confidential',
  grant_types: ['authorization_code', 'refresh_token'],
  redirect_uris: 'https://reports.example.com/callback',
  post_logout_redirect_uris: '',
  scopes: ['openid', 'profile'],
  ...extra,
});

test('created and edited from the form; emptied, the address is removed', async () => {
  const { agent, csrf } = await adminAgent();
  const form = await agent.get('/admin/applications/new?preset=custom');
  expect(form.text).toContain('name="backchannel_logout_uri"');
  expect(form.text).toContain('name="backchannel_logout_session_required"');
  // A web app's form offers it; a single-page app's (no server-side session) does not.
  expect((await agent.get('/admin/applications/new?preset=web')).text).toContain('name="backchannel_logout_uri"');
  expect((await agent.get('/admin/applications/new?preset=spa')).text).not.toContain('name="backchannel_logout_uri"');

  const created = await agent
    .post('/admin/applications')
    .type('form')
    .send({ csrf, ...fields({ backchannel_logout_uri: RECEIVER, backchannel_logout_session_required: 'true' }) });
  expect(created.status).toBe(201);
  const clientId = /id="client-id">([^<]+)</.exec(created.text)![1]!;
  expect(await t.db('oauth_clients').where({ client_id: clientId }).first()).toMatchObject({
    backchannel_logout_uri: RECEIVER,
    backchannel_logout_session_required: true,
  });
  const page = await agent.get(`/admin/applications/${clientId}`);
  expect(page.text).toContain(`value="${RECEIVER}"`);
  expect(page.text).toMatch(/name="backchannel_logout_session_required" value="true" checked/);

  const cleared = await agent
    .post(`/admin/applications/${clientId}`)
    .type('form')
    .send({ csrf, ...fields({ type: undefined, backchannel_logout_uri: '  ' }) });
  expect(cleared.status).toBe(303);
  expect(await t.db('oauth_clients').where({ client_id: clientId }).first()).toMatchObject({
    backchannel_logout_uri: null,
    backchannel_logout_session_required: false,
  });
});

test.each(['http://example.com/logout', 'https://127.0.0.1/logout#fragment', 'not a url'])(
  'refused %s: the API says why, and the form shows the same words beside the field, nothing saved',
  async (uri) => {
    const { agent, csrf, bearer } = await adminAgent();
    const api = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({ name: 'Reports', redirect_uris: ['https://reports.example.com/callback'], backchannel_logout_uri: uri });
    expect(api.status).toBe(400);
    const message: string = api.body.details.find((d: { path: string }) => d.path === 'backchannel_logout_uri').message;

    const before = Number((await t.db('oauth_clients').count('* as n').first())!.n);
    const res = await agent
      .post('/admin/applications')
      .type('form')
      .send({ csrf, ...fields({ backchannel_logout_uri: uri }) });
    expect(res.status).toBe(400);
    const escaped = message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
    expect(res.text).toMatch(new RegExp(`id="f-backchannel_logout_uri-error"[^>]*>[^<]*${escaped.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    expect(res.text).toContain('aria-invalid="true"');
    // The form keeps what was typed.
    expect(res.text).toContain(`value="${uri.replace(/&/g, '&amp;')}"`);
    expect(Number((await t.db('oauth_clients').count('* as n').first())!.n)).toBe(before);

    // Editing: the same refusal, the address it had is kept.
    const { client_id: clientId } = (
      await request(t.app)
        .post('/api/admin/oauth-clients')
        .set('Authorization', bearer)
        .send({ name: 'Reports', redirect_uris: ['https://reports.example.com/callback'], backchannel_logout_uri: RECEIVER })
    ).body.client;
    const edit = await agent
      .post(`/admin/applications/${clientId}`)
      .type('form')
      .send({ csrf, ...fields({ type: undefined, backchannel_logout_uri: uri }) });
    expect(edit.status).toBe(400);
    expect(edit.text).toContain('id="f-backchannel_logout_uri-error"');
    expect((await t.db('oauth_clients').where({ client_id: clientId }).first()).backchannel_logout_uri).toBe(RECEIVER);
  },
);

test("the application's page lists its recent deliveries: status, attempts, last answer or error, time", async () => {
  const { agent, bearer } = await adminAgent();
  const { client_id: clientId } = (
    await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({ name: 'Reports', redirect_uris: ['https://reports.example.com/callback'], backchannel_logout_uri: RECEIVER })
  ).body.client;
  const empty = await agent.get(`/admin/applications/${clientId}`);
  expect(empty.text).toContain('Recent back-channel logout deliveries');
  expect(empty.text).toContain('No logout token was sent to this application yet.');

  const user = randomUUID();
  await t.db('backchannel_logout_deliveries').insert([
    {
      client_id: clientId,
      user_id: user,
      sid: randomUUID(),
      status: 'delivered',
      attempts: 1,
      last_response_status: 204,
      last_attempt_at: new Date(),
    },
    {
      client_id: clientId,
      user_id: user,
      sid: randomUUID(),
      status: 'failed',
      attempts: 7,
      last_error: 'timeout: no answer within 10 seconds',
      last_attempt_at: new Date(),
    },
    {
      client_id: clientId,
      user_id: user,
      sid: randomUUID(),
      status: 'pending',
      attempts: 2,
      last_response_status: 503,
      last_attempt_at: new Date(),
    },
  ]);
  const api = await request(t.app).get(`/api/admin/oauth-clients/${clientId}/backchannel-logout-deliveries`).set('Authorization', bearer);
  expect(api.body.deliveries).toHaveLength(3);

  const page = await agent.get(`/admin/applications/${clientId}`);
  const table = page.text.slice(page.text.indexOf('id="backchannel-deliveries"'));
  for (const shown of ['Delivered', 'Failed', 'Pending', 'HTTP 204', 'HTTP 503', 'timeout: no answer within 10 seconds', '>7<'])
    expect(table).toContain(shown);
  expect(table.indexOf('Pending')).toBeLessThan(table.indexOf('Failed'));

  const german = await agent.get(`/admin/applications/${clientId}`).set('Accept-Language', 'de');
  for (const shown of ['Letzte Back-Channel-Logout-Zustellungen', 'Zugestellt', 'Fehlgeschlagen', 'Ausstehend', 'Back-Channel-Logout-URL'])
    expect(german.text).toContain(shown);

  // A reader of applications without the right to change them sees the list too (the endpoint's guard: oauth_clients:read).
  const reader = await makeSignedInUser(t, ['admin']);
  const seen = await reader.agent.get(`/admin/applications/${clientId}`);
  expect(seen.status).toBe(200);
  expect(seen.text).toContain('HTTP 204');
});
