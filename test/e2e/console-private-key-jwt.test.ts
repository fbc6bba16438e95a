import { makeClientKey } from '../helpers/client-keys';
import { makeSignedInUser } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/** Issue 34 in the console's application form: a private_key_jwt application with its keys, by the API's rules. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function adminAgent() {
  const s = await makeSignedInUser(t, ['super_admin']);
  return { ...s, csrf: await csrfFrom(s.agent, '/admin/applications/new?preset=custom') };
}

test('the form offers private_key_jwt; created with a JWK Set, no secret is shown and the keys are stored', async () => {
  const { agent, csrf } = await adminAgent();
  const form = await agent.get('/admin/applications/new?preset=custom');
  expect(form.text).toContain('value="private_key_jwt"');
  expect(form.text).toContain('name="jwks"');
  expect(form.text).toContain('name="jwks_uri"');

  const key = await makeClientKey();
  const res = await agent
    .post('/admin/applications')
    .type('form')
    .send({
      csrf,
      name: 'Signed exporter',
      type: 'private_key_jwt',
      grant_types: ['client_credentials'],
      redirect_uris: '',
      post_logout_redirect_uris: '',
      scopes: ['read'],
      jwks: JSON.stringify({ keys: [key.publicJwk] }),
      jwks_uri: '',
    });
  expect(res.status).toBe(201);
  expect(res.text).not.toContain('id="client-secret"');
  const clientId = /id="client-id">([^<]+)</.exec(res.text)![1]!;
  const row = await t.db('oauth_clients').where({ client_id: clientId }).first();
  expect(row).toMatchObject({ type: 'confidential', token_endpoint_auth_method: 'private_key_jwt', secret_hash: null, jwks_uri: null });
  expect(row.jwks.keys[0].kid).toBe(key.kid);

  // The application's page names the method, shows the keys, and offers no secret rotation.
  const page = await agent.get(`/admin/applications/${clientId}`);
  expect(page.text).toContain('private_key_jwt');
  expect(page.text).toContain(key.kid);
  expect(page.text).not.toContain(`/admin/applications/${clientId}/rotate`);

  // Switching to a key-set URL (the JWK Set field emptied).
  const edit = await agent
    .post(`/admin/applications/${clientId}`)
    .type('form')
    .send({
      csrf,
      name: 'Signed exporter',
      grant_types: ['client_credentials'],
      redirect_uris: '',
      post_logout_redirect_uris: '',
      scopes: ['read'],
      jwks: '',
      jwks_uri: 'https://exporter.example.test/jwks.json',
    });
  expect(edit.status).toBe(303);
  expect(await t.db('oauth_clients').where({ client_id: clientId }).first()).toMatchObject({
    jwks: null,
    jwks_uri: 'https://exporter.example.test/jwks.json',
  });
});

test('a JWK Set that is not JSON, or a private key, is shown as an error on the form (400), nothing created', async () => {
  const { agent, csrf } = await adminAgent();
  const key = await makeClientKey();
  for (const jwks of ['{not json', JSON.stringify({ keys: [{ ...key.publicJwk, d: 'secret' }] })]) {
    const before = Number((await t.db('oauth_clients').count('* as n').first())!.n);
    const res = await agent
      .post('/admin/applications')
      .type('form')
      .send({
        csrf,
        name: 'Broken keys',
        type: 'private_key_jwt',
        grant_types: ['client_credentials'],
        redirect_uris: '',
        post_logout_redirect_uris: '',
        scopes: ['read'],
        jwks,
        jwks_uri: '',
      });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/jwks/);
    expect(Number((await t.db('oauth_clients').count('* as n').first())!.n)).toBe(before);
  }
});

test('the German form has the same fields', async () => {
  const { agent } = await adminAgent();
  const page = await agent.get('/admin/applications/new?preset=custom').set('Accept-Language', 'de');
  expect(page.text).toContain('Öffentliche Schlüssel (JWK-Set, JSON)');
  expect(page.text).toContain('name="jwks_uri"');
});
