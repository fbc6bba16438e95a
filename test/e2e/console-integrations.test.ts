import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { makeRole } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * The console's pages for every kind of application (CONTRACT §12), API resources, identity providers (§16) and
 * webhooks (§17): each change checked through the REST API or the database and the audit trail; bad input shown
 * again with field errors (4xx, never 5xx); a manager refused where the API refuses a manager; stale forms; secrets
 * shown once only.
 */
let t: TestApp;
let upstream: UpstreamOidc;
let receiver: WebhookReceiver;
let superAdmin: { agent: TestAgent; csrf: string; bearer: string };
let manager: { agent: TestAgent; csrf: string; bearer: string };

beforeAll(async () => {
  // IDP_ALLOW_PRIVATE: the upstream OpenID provider of the test listens on 127.0.0.1.
  t = await createTestApp({ env: { IDP_ALLOW_PRIVATE: 'true' } });
  upstream = await startUpstreamOidc([`${t.config.baseUrl}/api/auth/idp/corp/callback`]);
  receiver = await startWebhookReceiver();
  superAdmin = await consoleAgent(['super_admin']);
  manager = await consoleAgent(['manager']);
});
afterAll(async () => {
  await upstream?.stop();
  await receiver?.close();
  await t?.close();
});

async function consoleAgent(roles: string[]) {
  const s = await makeSignedInUser(t, roles);
  return { agent: s.agent, bearer: s.bearer, csrf: await csrfFrom(s.agent, '/admin/users') };
}

const post = (agent: TestAgent, path: string, csrf: string, fields: Record<string, string | string[]> = {}) =>
  agent
    .post(path)
    .type('form')
    .send({ csrf, ...fields });

const api = (path: string, bearer = superAdmin.bearer) => request(t.app).get(path).set('Authorization', bearer);

async function flashAfter(agent: TestAgent, res: request.Response): Promise<string> {
  expect([res.status, res.text.slice(0, 0)]).toEqual([303, '']);
  const page = await agent.get(res.headers.location as string);
  const match = /<p class="(ok|error)" role="(?:status|alert)">([^<]*)<\/p>/.exec(page.text);
  return match ? `${match[1]}: ${match[2]}` : '(no flash)';
}

/** The message shown next to a field (the form re-rendered with the API schema's or the service's refusal). */
function fieldError(html: string, field: string): string | undefined {
  return new RegExp(`id="f-${field}-error">([^<]*)<`).exec(html)?.[1];
}

async function auditTypes(where: { subject_id?: string; type?: string }): Promise<string[]> {
  await t.ctx.events.idle?.();
  return (await t.db('audit_events').where(where).orderBy('id')).map((e: { type: string }) => e.type);
}

describe('every new page: no-store, a manager refused as the API refuses a manager', () => {
  test('pages answer no-store and frame-ancestors none; the navigation lists them', async () => {
    for (const path of [
      '/admin/api-resources',
      '/admin/api-resources/new',
      '/admin/identity-providers',
      '/admin/identity-providers/new',
      '/admin/identity-providers/new?kind=github',
      '/admin/webhooks',
      '/admin/webhooks/new',
    ]) {
      const res = await superAdmin.agent.get(path);
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.headers['cache-control']).toContain('no-store');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    }
    const nav = (await superAdmin.agent.get('/admin')).text;
    for (const href of ['/admin/api-resources', '/admin/identity-providers', '/admin/webhooks']) expect(nav).toContain(`href="${href}"`);
  });

  test('a manager: 403 page on every new page and action, like the API', async () => {
    const resource = await t
      .db('api_resources')
      .insert({ id: crypto.randomUUID(), identifier: `https://m-${Date.now()}.test/`, name: 'M' })
      .returning('id');
    for (const [method, path, api_] of [
      ['get', '/admin/api-resources', '/api/admin/api-resources'],
      ['get', '/admin/identity-providers', '/api/admin/identity-providers'],
      ['get', '/admin/webhooks', '/api/admin/webhooks'],
      ['post', '/admin/api-resources', ''],
      ['post', `/admin/api-resources/${resource[0].id}/delete`, ''],
      ['post', '/admin/identity-providers', ''],
      ['post', '/admin/webhooks', ''],
    ] as const) {
      const res =
        method === 'get'
          ? await manager.agent.get(path)
          : await post(manager.agent, path, manager.csrf, {
              confirm: 'yes',
              identifier: 'https://x.test/',
              name: 'x',
              url: 'https://x.test/',
            });
      expect([path, res.status]).toEqual([path, 403]);
      expect(res.text).toContain('Not allowed');
      if (api_) expect((await api(api_, manager.bearer)).status).toBe(403);
    }
    expect(await t.db('api_resources').where({ id: resource[0].id }).first()).toBeDefined();
    expect(await t.db('webhook_subscriptions').where({ url: 'https://x.test/' }).first()).toBeUndefined();
  });
});

test('MFA_REQUIRED_FOR_ADMINS: an admin without a second factor gets the 403 page on the new sections too', async () => {
  const strict = await createTestApp({ env: { MFA_REQUIRED_FOR_ADMINS: 'true' } });
  try {
    const { agent } = await signIn(strict, await makeUser(strict, { roles: ['super_admin'] }));
    for (const path of ['/admin/api-resources', '/admin/identity-providers', '/admin/webhooks']) {
      const res = await agent.get(path);
      expect([path, res.status]).toEqual([path, 403]);
      expect(res.text).toContain('second factor');
    }
  } finally {
    await strict.close();
  }
});

describe('applications: every client type of CONTRACT §12', () => {
  test('a public client: created without a secret, with the settings to paste; no rotate; audited', async () => {
    const res = await post(superAdmin.agent, '/admin/applications', superAdmin.csrf, {
      name: 'Console SPA',
      type: 'public',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: 'http://127.0.0.1/callback\ncom.example.app:/callback',
      post_logout_redirect_uris: '',
      scopes: ['openid', 'profile'],
    });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toContain('no-store');
    expect(res.text).not.toContain('id="client-secret"');
    expect(res.text).toContain('A public client has no secret');
    expect(res.text).toContain(`${t.config.oidcIssuer}/.well-known/openid-configuration`);
    const clientId = /id="client-id">([^<]+)</.exec(res.text)![1]!;
    const viaApi = (await api(`/api/admin/oauth-clients/${clientId}`)).body.client;
    expect(viaApi).toMatchObject({
      type: 'public',
      token_endpoint_auth_method: 'none',
      redirect_uris: ['http://127.0.0.1/callback', 'com.example.app:/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
    });
    const detail = await superAdmin.agent.get(`/admin/applications/${clientId}`);
    expect(detail.text).not.toContain('Rotate secret');
    const rotate = await post(superAdmin.agent, `/admin/applications/${clientId}/rotate`, superAdmin.csrf, { confirm: 'yes' });
    expect(await flashAfter(superAdmin.agent, rotate)).toBe('error: A public application has no secret to rotate.');
    expect(await auditTypes({ type: 'oauth.client.created', subject_id: clientId })).toHaveLength(1);
  });

  test('a machine-to-machine client: client_credentials without redirect URIs, allowed an API resource; the secret works', async () => {
    const identifier = `https://invoices-${Date.now()}.test/`;
    await request(t.app)
      .post('/api/admin/api-resources')
      .set('Authorization', superAdmin.bearer)
      .send({ identifier, name: 'Invoices', scopes: ['invoices:read'] })
      .expect(201);
    const form = await superAdmin.agent.get('/admin/applications/new?preset=custom');
    expect(form.text).toContain(`value="${identifier}"`);
    const res = await post(superAdmin.agent, '/admin/applications', superAdmin.csrf, {
      name: 'Billing job',
      type: 'confidential',
      grant_types: ['client_credentials'],
      redirect_uris: '',
      post_logout_redirect_uris: '',
      scopes: ['openid'],
      allowed_resources: [identifier],
    });
    expect(res.status).toBe(201);
    const clientId = /id="client-id">([^<]+)</.exec(res.text)![1]!;
    const secret = /id="client-secret">([^<]+)</.exec(res.text)![1]!;
    expect(res.text).not.toContain('id="redirect-uri"');
    expect((await api(`/api/admin/oauth-clients/${clientId}`)).body.client).toMatchObject({
      grant_types: ['client_credentials'],
      allowed_resources: [identifier],
      redirect_uris: [],
    });
    const token = await request(t.app)
      .post('/api/oauth/token')
      .auth(clientId, secret)
      .type('form')
      .send({ grant_type: 'client_credentials', resource: identifier, scope: 'invoices:read' });
    expect(token.status).toBe(200);
    expect((await superAdmin.agent.get(`/admin/applications/${clientId}`)).text).not.toContain(secret);
  });

  test('edit grant types and allowed resources; the API sees the change', async () => {
    const client = await makeClient(t, { name: 'Editable' });
    const res = await post(superAdmin.agent, `/admin/applications/${client.clientId}`, superAdmin.csrf, {
      name: 'Editable',
      grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      redirect_uris: 'https://editable.test/cb',
      post_logout_redirect_uris: '',
      scopes: ['openid'],
    });
    expect(await flashAfter(superAdmin.agent, res)).toBe('ok: Application saved.');
    expect((await api(`/api/admin/oauth-clients/${client.clientId}`)).body.client.grant_types).toEqual([
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
    ]);
  });

  test.each([
    [
      'client_credentials for a public client',
      { type: 'public', grant_types: ['client_credentials'], redirect_uris: '' },
      'grant_types',
      /confidential clients only/,
    ],
    ['no grant type', { type: 'confidential', redirect_uris: 'https://x.test/cb' }, 'grant_types', /at least one grant type/],
    [
      'a private-use scheme for a confidential client',
      { type: 'confidential', grant_types: ['authorization_code'], redirect_uris: 'com.example.app:/cb' },
      'redirect_uris',
      /public \(native\) clients only/,
    ],
    [
      'the code grant without a redirect URI',
      { type: 'confidential', grant_types: ['authorization_code'], redirect_uris: '' },
      'redirect_uris',
      /redirect URI is required/,
    ],
    [
      'an unregistered API resource',
      { type: 'confidential', grant_types: ['client_credentials'], redirect_uris: '', allowed_resources: ['https://unknown.test/'] },
      'allowed_resources',
      /not a registered API resource/,
    ],
    [
      'a fragment in a redirect URI',
      { type: 'public', grant_types: ['authorization_code'], redirect_uris: 'https://x.test/cb#f' },
      'redirect_uris',
      /./,
    ],
  ])('bad input: %s -> 400, the form again with the message next to the field', async (_name, fields, field, message) => {
    const before = await t.db('oauth_clients').count({ n: '*' }).first();
    const res = await post(superAdmin.agent, '/admin/applications', superAdmin.csrf, {
      name: 'Refused',
      post_logout_redirect_uris: '',
      scopes: ['openid'],
      ...fields,
    });
    expect(res.status).toBe(400);
    expect(fieldError(res.text, field)).toMatch(message);
    expect(res.text).toContain('value="Refused"');
    expect(await t.db('oauth_clients').count({ n: '*' }).first()).toEqual(before);
  });
});

describe('API resources', () => {
  test('register, edit and delete (confirmed), each seen by the REST API and audited', async () => {
    const identifier = `https://orders-${Date.now()}.test/`;
    const created = await post(superAdmin.agent, '/admin/api-resources', superAdmin.csrf, {
      identifier,
      name: 'Orders',
      scopes: 'orders:read\norders:write',
      access_token_ttl_s: '900',
    });
    expect(await flashAfter(superAdmin.agent, created)).toBe('ok: API resource Orders registered.');
    const id = (created.headers.location as string).split('/').pop()!;
    expect((await api(`/api/admin/api-resources/${id}`)).body.resource).toMatchObject({
      identifier,
      name: 'Orders',
      scopes: ['orders:read', 'orders:write'],
      access_token_ttl_s: 900,
      open_registration: false,
    });
    expect((await superAdmin.agent.get('/admin/api-resources')).text).toContain(identifier);

    const edited = await post(superAdmin.agent, `/admin/api-resources/${id}`, superAdmin.csrf, {
      identifier,
      name: 'Orders API',
      scopes: 'orders:read',
      access_token_ttl_s: '3600',
      open_registration: 'true',
      dpop_bound_access_tokens: 'true',
    });
    expect(await flashAfter(superAdmin.agent, edited)).toBe('ok: API resource saved.');
    expect((await api(`/api/admin/api-resources/${id}`)).body.resource).toMatchObject({
      name: 'Orders API',
      scopes: ['orders:read'],
      open_registration: true,
      dpop_bound_access_tokens: true,
    });

    const ask = await post(superAdmin.agent, `/admin/api-resources/${id}/delete`, superAdmin.csrf);
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('Delete the API resource Orders API?');
    expect((await api(`/api/admin/api-resources/${id}`)).status).toBe(200);
    const done = await post(superAdmin.agent, `/admin/api-resources/${id}/delete`, superAdmin.csrf, { confirm: 'yes' });
    expect(await flashAfter(superAdmin.agent, done)).toBe('ok: API resource Orders API deleted.');
    expect((await api(`/api/admin/api-resources/${id}`)).status).toBe(404);
    expect(await auditTypes({ subject_id: id })).toEqual(['oauth.resource.created', 'oauth.resource.changed', 'oauth.resource.deleted']);

    // Stale forms: the resource was deleted in another tab.
    const again = await post(superAdmin.agent, `/admin/api-resources/${id}/delete`, superAdmin.csrf, { confirm: 'yes' });
    expect(await flashAfter(superAdmin.agent, again)).toBe('error: API resource not found');
    const staleEdit = await post(superAdmin.agent, `/admin/api-resources/${id}`, superAdmin.csrf, { identifier, name: 'x' });
    expect(staleEdit.status).toBe(404);
    expect(staleEdit.text).toContain('what it showed was deleted');
  });

  test.each([
    ['identifier', { identifier: 'not a uri', name: 'X' }, /absolute URI/],
    ['identifier', { identifier: 'https://x.test/#frag', name: 'X' }, /without a fragment/],
    ['name', { identifier: 'https://named.test/', name: '' }, /./],
    ['access_token_ttl_s', { identifier: 'https://ttl.test/', name: 'X', access_token_ttl_s: 'soon' }, /must be a number/],
    ['access_token_ttl_s', { identifier: 'https://ttl.test/', name: 'X', access_token_ttl_s: '10' }, /at least 60/],
    ['scopes', { identifier: 'https://sc.test/', name: 'X', scopes: 'openid' }, /openid is not an API scope/],
  ])('bad input on %s -> 400 with the field error', async (field, fields, message) => {
    const res = await post(superAdmin.agent, '/admin/api-resources', superAdmin.csrf, fields);
    expect(res.status).toBe(400);
    expect(fieldError(res.text, field)).toMatch(message);
  });

  test('a taken identifier -> 409, the form again with the message', async () => {
    const identifier = `https://taken-${Date.now()}.test/`;
    await post(superAdmin.agent, '/admin/api-resources', superAdmin.csrf, { identifier, name: 'One' });
    const res = await post(superAdmin.agent, '/admin/api-resources', superAdmin.csrf, { identifier, name: 'Two' });
    expect(res.status).toBe(409);
    expect(fieldError(res.text, 'identifier')).toMatch(/already exists/);
  });

  test('oauth_clients:read alone: the list without controls, and writes refused', async () => {
    const reader = await makeUser(t, { roles: ['manager'] });
    const role = await makeRole(t, { permissions: ['oauth_clients:read'] });
    await t.db('user_roles').insert({ user_id: reader.id, role_id: role.id });
    const { agent } = await signIn(t, reader);
    const csrf = await csrfFrom(agent, '/admin/users');
    const list = await agent.get('/admin/api-resources');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain('Register an API');
    const refused = await post(agent, '/admin/api-resources', csrf, { identifier: 'https://reader.test/', name: 'R' });
    expect(refused.status).toBe(403);
    expect(await t.db('api_resources').where({ identifier: 'https://reader.test/' }).first()).toBeUndefined();
  });
});

describe('identity providers', () => {
  test('GitHub: added with a write-only secret, edited (an empty secret keeps it), deleted after confirmation', async () => {
    const kinds = await superAdmin.agent.get('/admin/identity-providers/new');
    for (const kind of ['oidc', 'google', 'microsoft', 'gitlab', 'github']) expect(kinds.text).toContain(`?kind=${kind}`);
    const created = await post(superAdmin.agent, '/admin/identity-providers', superAdmin.csrf, {
      kind: 'github',
      slug: 'gh-console',
      name: 'GitHub',
      base_url: 'https://github.com',
      api_base_url: 'https://api.github.com',
      client_id: 'Iv1.console',
      client_secret: 'gh-secret-value-1',
      scopes: 'read:user user:email',
      enabled: 'true',
      allow_signup: 'true',
    });
    expect(await flashAfter(superAdmin.agent, created)).toBe('ok: Identity provider GitHub added.');
    const id = (created.headers.location as string).split('/').pop()!;
    expect((await api(`/api/admin/identity-providers/${id}`)).body.provider).toMatchObject({
      slug: 'gh-console',
      type: 'github',
      client_id: 'Iv1.console',
      has_client_secret: true,
      enabled: true,
      trust_email: false,
    });
    const detail = await superAdmin.agent.get(`/admin/identity-providers/${id}`);
    expect(detail.text).not.toContain('gh-secret-value-1');
    expect(detail.text).toContain(`${t.config.baseUrl}/api/auth/idp/gh-console/callback`);
    const sealed = (await t.db('identity_providers').where({ id }).first()).client_secret_sealed;

    const kept = await post(superAdmin.agent, `/admin/identity-providers/${id}`, superAdmin.csrf, {
      slug: 'gh-console',
      name: 'GitHub (company)',
      base_url: 'https://github.com',
      api_base_url: 'https://api.github.com',
      client_id: 'Iv1.console',
      client_secret: '',
      scopes: 'read:user user:email',
    });
    expect(await flashAfter(superAdmin.agent, kept)).toBe('ok: Identity provider saved.');
    const row = await t.db('identity_providers').where({ id }).first();
    expect([row.name, row.client_secret_sealed, row.enabled]).toEqual(['GitHub (company)', sealed, false]);
    await post(superAdmin.agent, `/admin/identity-providers/${id}`, superAdmin.csrf, {
      slug: 'gh-console',
      name: 'GitHub (company)',
      client_id: 'Iv1.console',
      client_secret: 'gh-secret-value-2',
      scopes: 'read:user user:email',
      enabled: 'true',
    });
    expect((await t.db('identity_providers').where({ id }).first()).client_secret_sealed).not.toBe(sealed);

    const ask = await post(superAdmin.agent, `/admin/identity-providers/${id}/delete`, superAdmin.csrf);
    expect(ask.text).toContain('Delete the identity provider GitHub (company)?');
    const done = await post(superAdmin.agent, `/admin/identity-providers/${id}/delete`, superAdmin.csrf, { confirm: 'yes' });
    expect(await flashAfter(superAdmin.agent, done)).toBe('ok: Identity provider deleted.');
    expect((await api(`/api/admin/identity-providers/${id}`)).status).toBe(404);
    const types = (await t.db('audit_events').where('type', 'like', 'idp.provider.%').whereRaw(`detail->>'provider_id' = ?`, [id])).map(
      (e: { type: string }) => e.type,
    );
    expect(types).toEqual(['idp.provider.created', 'idp.provider.changed', 'idp.provider.changed', 'idp.provider.deleted']);
    const stale = await post(superAdmin.agent, `/admin/identity-providers/${id}/delete`, superAdmin.csrf, { confirm: 'yes' });
    expect(await flashAfter(superAdmin.agent, stale)).toBe('error: Identity provider not found');
  });

  test('OpenID Connect by issuer: the discovery document is checked, the provider is offered on /login', async () => {
    const created = await post(superAdmin.agent, '/admin/identity-providers', superAdmin.csrf, {
      kind: 'oidc',
      slug: 'corp',
      name: 'Corp SSO',
      issuer: upstream.issuer,
      client_id: upstream.clientId,
      client_secret: upstream.clientSecret,
      scopes: 'openid profile email',
      enabled: 'true',
      allow_signup: 'true',
    });
    expect(await flashAfter(superAdmin.agent, created)).toBe('ok: Identity provider Corp SSO added.');
    const providers = (await api('/api/admin/identity-providers')).body.providers as Array<{ slug: string; issuer: string }>;
    expect(providers.find((p) => p.slug === 'corp')?.issuer).toBe(upstream.issuer);
    expect((await request(t.app).get('/login')).text).toContain('Continue with Corp SSO');
  });

  test.each([
    ['issuer', { kind: 'oidc', slug: 'dead', name: 'Dead', issuer: 'http://127.0.0.1:9/' }, /could not be fetched/],
    ['issuer', { kind: 'microsoft', slug: 'ms', name: 'Microsoft', issuer: '' }, /tenant/],
    ['slug', { kind: 'github', slug: 'Not A Slug', name: 'GH' }, /lower-case/],
    ['client_secret', { kind: 'github', slug: 'gh-nosecret', name: 'GH', client_secret: '' }, /secret is required/],
  ])('bad input on %s -> 400 with the field error, and the secret is not shown again', async (field, fields, message) => {
    const res = await post(superAdmin.agent, '/admin/identity-providers', superAdmin.csrf, {
      client_id: 'cid',
      client_secret: 'typed-secret-never-echoed',
      ...fields,
    });
    expect(res.status).toBe(400);
    expect(fieldError(res.text, field)).toMatch(message);
    expect(res.text).not.toContain('typed-secret-never-echoed');
  });

  test('a taken slug -> 409 with the message on the slug', async () => {
    const fields = { kind: 'github', slug: 'gh-taken', name: 'GH', client_id: 'c', client_secret: 's', enabled: 'true' };
    await post(superAdmin.agent, '/admin/identity-providers', superAdmin.csrf, fields);
    const res = await post(superAdmin.agent, '/admin/identity-providers', superAdmin.csrf, fields);
    expect(res.status).toBe(409);
    expect(fieldError(res.text, 'slug')).toMatch(/already exists/);
  });
});

describe('webhooks', () => {
  test('create shows the whsec_ secret once; edit; rotate shows a new one once; delete after confirmation; all audited', async () => {
    const created = await post(superAdmin.agent, '/admin/webhooks', superAdmin.csrf, {
      url: receiver.url,
      events: 'user.*\nauth.login.failed',
      description: 'CRM sync',
      enabled: 'true',
    });
    expect(created.status).toBe(201);
    expect(created.headers['cache-control']).toContain('no-store');
    const secret = /id="webhook-secret">([^<]+)</.exec(created.text)![1]!;
    expect(secret).toMatch(/^whsec_/);
    const hooks = (await api('/api/admin/webhooks')).body.webhooks as Array<{ id: string; url: string; events: string[] }>;
    const hook = hooks.find((h) => h.url === receiver.url)!;
    expect(hook.events).toEqual(['user.*', 'auth.login.failed']);
    const detail = await superAdmin.agent.get(`/admin/webhooks/${hook.id}`);
    expect(detail.status).toBe(200);
    expect(detail.text).not.toContain(secret);
    expect((await superAdmin.agent.get('/admin/webhooks')).text).not.toContain(secret);

    const edited = await post(superAdmin.agent, `/admin/webhooks/${hook.id}`, superAdmin.csrf, {
      url: receiver.url,
      events: 'user.created',
      description: 'CRM sync (users)',
    });
    expect(await flashAfter(superAdmin.agent, edited)).toBe('ok: Webhook saved.');
    expect((await api(`/api/admin/webhooks/${hook.id}`)).body.webhook).toMatchObject({
      events: ['user.created'],
      description: 'CRM sync (users)',
      enabled: false,
    });

    expect((await post(superAdmin.agent, `/admin/webhooks/${hook.id}/rotate`, superAdmin.csrf)).text).toContain(
      'Rotate the signing secret',
    );
    const rotated = await post(superAdmin.agent, `/admin/webhooks/${hook.id}/rotate`, superAdmin.csrf, { confirm: 'yes' });
    expect(rotated.status).toBe(200);
    const next = /id="webhook-secret">([^<]+)</.exec(rotated.text)![1]!;
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(secret);
    expect(
      t.ctx.sealer.open((await t.db('webhook_subscriptions').where({ id: hook.id }).first()).secret_sealed, `webhook-secret:${hook.id}`),
    ).toBe(next);

    const done = await post(superAdmin.agent, `/admin/webhooks/${hook.id}/delete`, superAdmin.csrf, { confirm: 'yes' });
    expect(await flashAfter(superAdmin.agent, done)).toBe('ok: Webhook deleted.');
    expect((await api(`/api/admin/webhooks/${hook.id}`)).status).toBe(404);
    expect(await auditTypes({ subject_id: hook.id })).toEqual([
      'webhook.created',
      'webhook.changed',
      'webhook.secret_rotated',
      'webhook.deleted',
    ]);

    // Stale forms of another tab: a clear message, and never a secret.
    const staleRotate = await post(superAdmin.agent, `/admin/webhooks/${hook.id}/rotate`, superAdmin.csrf, { confirm: 'yes' });
    expect(await flashAfter(superAdmin.agent, staleRotate)).toBe('error: Webhook not found');
    const staleDelete = await post(superAdmin.agent, `/admin/webhooks/${hook.id}/delete`, superAdmin.csrf, { confirm: 'yes' });
    expect(await flashAfter(superAdmin.agent, staleDelete)).toBe('error: Webhook not found');
  });

  test.each([
    ['url', { url: 'not a url', events: 'user.*' }, /absolute URL/],
    ['url', { url: 'ftp://hooks.test/x', events: 'user.*' }, /https/],
    ['events', { url: 'https://93.184.215.14/hook', events: '' }, /at least one event/],
    ['events', { url: 'https://93.184.215.14/hook', events: 'no.such.event' }, /audit event type/],
  ])('bad input on %s -> 400 with the field error, nothing created', async (field, fields, message) => {
    const before = await t.db('webhook_subscriptions').count({ n: '*' }).first();
    const res = await post(superAdmin.agent, '/admin/webhooks', superAdmin.csrf, { enabled: 'true', ...fields });
    expect(res.status).toBe(400);
    expect(fieldError(res.text, field)).toMatch(message);
    expect(await t.db('webhook_subscriptions').count({ n: '*' }).first()).toEqual(before);
  });

  test('deliveries: listed with status and attempts, 50 a page, filtered; redeliver is audited', async () => {
    const created = await request(t.app)
      .post('/api/admin/webhooks')
      .set('Authorization', superAdmin.bearer)
      .send({ url: `${receiver.url}?d=1`, events: ['user.*'] })
      .expect(201);
    const id = created.body.webhook.id as string;
    await request(t.app)
      .post('/api/users')
      .set('Authorization', superAdmin.bearer)
      .send({ email: `hooked-${Date.now()}@example.test`, first_name: 'Hoo', last_name: 'Ked' })
      .expect(201);
    await t.ctx.events.idle?.();
    const page = await superAdmin.agent.get(`/admin/webhooks/${id}/deliveries`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('user.created');
    const deliveryId = /\/deliveries\/(\d+)\/redeliver/.exec(page.text)![1]!;
    const redo = await post(superAdmin.agent, `/admin/webhooks/${id}/deliveries/${deliveryId}/redeliver`, superAdmin.csrf);
    expect(await flashAfter(superAdmin.agent, redo)).toBe('ok: Delivery of user.created queued again: it is attempted now.');
    expect(await auditTypes({ subject_id: id, type: 'webhook.redelivered' })).toHaveLength(1);

    await t.db('webhook_deliveries').insert(
      Array.from({ length: 55 }, (_, i) => ({
        subscription_id: id,
        event_id: 900_000 + i,
        event_type: 'user.changed',
        status: 'failed',
        attempts: 7,
      })),
    );
    const first = await superAdmin.agent.get(`/admin/webhooks/${id}/deliveries`);
    expect(first.text.match(/<tr>/g)?.length).toBe(51);
    const nextHref = /href="([^"]+cursor=[^"]+)"/.exec(first.text)![1]!.replace(/&amp;/g, '&');
    const second = await superAdmin.agent.get(nextHref);
    expect(second.text.match(/<tr>/g)?.length).toBe(1 + 56 - 50);
    expect(second.text).toContain('user.created');
    const failed = await superAdmin.agent.get(`/admin/webhooks/${id}/deliveries?status=failed`);
    expect(failed.text).not.toContain('user.created');
    const badCursor = await superAdmin.agent.get(`/admin/webhooks/${id}/deliveries?cursor=%21%21`);
    expect(badCursor.status).toBe(400);
    expect(badCursor.text).toContain('cursor is not one this server gave out');
    const staleRedo = await post(superAdmin.agent, `/admin/webhooks/${id}/deliveries/1${deliveryId}9/redeliver`, superAdmin.csrf);
    expect(await flashAfter(superAdmin.agent, staleRedo)).toBe('error: Delivery not found');
  });
});
