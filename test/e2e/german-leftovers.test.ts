import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeApiResource } from '../helpers/apps';
import { makeClient, makeSignedInUser, makeUser } from '../helpers/factories';
import { makeRole } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * No English left in the German console and pages (issue 32, item 8): every console page and the end-user pages are
 * fetched with `Accept-Language: de`; their visible text (tags, code, URLs, e-mail addresses and the data the
 * fixtures typed left out) must hold none of the English words below, which German text never needs.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** English words (whole words, case-sensitive where German shares the spelling in lower case) that a German page never shows. */
const DENY = [
  'the',
  'and',
  'of',
  'with',
  'must',
  'should',
  'not set',
  'Save',
  'Cancel',
  'Delete',
  'Create',
  'Sign in',
  'Sign out',
  'Settings',
  'Users',
  'Roles',
  'Applications',
  'required',
  'is too long',
  'Choose',
  'None',
  'Yes',
  'No',
  'Active',
  'Never',
  'List',
  'Read',
  'Holds',
  'Administers',
  'Reads',
  'updates',
  'Permissions',
  'Description',
  'Application',
  'global role',
  'registered',
  'Detail',
];

/** A page's visible text: no tags, no code or scripts, no URLs, addresses, ids or permission names. */
function visibleText(html: string): string {
  return html
    .replace(/<(script|style|code|pre|textarea|title)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&[a-z#0-9]+;/g, ' ')
    .replace(/\bhttps?:\/\/\S+/g, ' ')
    .replace(/\S+@\S+/g, ' ')
    .replace(/\b[a-z_]+:[a-z_]+\b/g, ' ')
    .replace(/\s+/g, ' ');
}

function leftovers(html: string): string[] {
  const text = visibleText(html);
  return DENY.filter((w) => new RegExp(`(^|[^\\p{L}])${w.replace(/ /g, '\\s+')}($|[^\\p{L}])`, 'u').test(text)).map((w) => {
    const at = text.search(new RegExp(`(^|[^\\p{L}])${w.replace(/ /g, '\\s+')}($|[^\\p{L}])`, 'u'));
    return `${w}: …${text.slice(Math.max(0, at - 60), at + 60)}…`;
  });
}

async function german(agent: TestAgent, path: string): Promise<string> {
  const res = await agent.get(path).set('accept-language', 'de');
  expect([path, res.status]).toEqual([path, 200]);
  return res.text;
}

test('the German console holds no English words', async () => {
  const { agent } = await makeSignedInUser(t, ['super_admin']);
  const person = await makeUser(t, { firstName: 'Mia', lastName: 'Muster' });
  const client = await makeClient(t, { name: 'Rechnungen' });
  const resource = await makeApiResource(t, { name: 'Rechnungs-API' });
  const role = await makeRole(t, {
    name: 'buchhaltung',
    application: client.clientId,
    description: 'Buchhaltung',
    permissions: ['users:read'],
  });
  const pages = [
    '/admin',
    '/admin/users',
    `/admin/users/${person.id}`,
    '/admin/users/new',
    '/admin/roles',
    '/admin/roles/new',
    `/admin/roles/${role.id}`,
    '/admin/applications',
    `/admin/applications/${client.clientId}`,
    '/admin/api-resources',
    `/admin/api-resources/${resource.id}`,
    '/admin/api-resources/new',
    '/admin/identity-providers',
    '/admin/webhooks',
    '/admin/scim',
    '/admin/audit',
    '/admin/signing-keys',
    '/admin/settings',
  ];
  // The walk can fail: the same pages in English are full of the denied words.
  expect(leftovers((await agent.get('/admin/roles/new').set('accept-language', 'en')).text).length).toBeGreaterThan(10);
  expect(leftovers((await agent.get('/admin/settings').set('accept-language', 'en')).text).length).toBeGreaterThan(10);
  const found: string[] = [];
  for (const path of pages) for (const l of leftovers(await german(agent, path))) found.push(`${path} ${l}`);
  expect(found).toEqual([]);
  // The start-up configuration's values are code, except the words for "not set" and "set".
  const settings = await german(agent, '/admin/settings');
  expect(settings).not.toContain('(not set)');
  expect(settings).toContain('(nicht gesetzt)');
});

test('the German end-user pages hold no English words', async () => {
  const { agent } = await makeSignedInUser(t);
  const found: string[] = [];
  for (const path of ['/account', '/device']) for (const l of leftovers(await german(agent, path))) found.push(`${path} ${l}`);
  for (const path of ['/login', '/forgot-password']) {
    const res = await request(t.app).get(path).set('accept-language', 'de');
    for (const l of leftovers(res.text)) found.push(`${path} ${l}`);
  }
  expect(found).toEqual([]);
});

test('the identity-provider form names the variables that allow a private issuer, links to Settings and keeps the values', async () => {
  const { agent } = await makeSignedInUser(t, ['super_admin']);
  const form = await agent.get('/admin/identity-providers/new?kind=oidc').set('accept-language', 'de');
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)?.[1] ?? '';
  const refused = await agent.post('/admin/identity-providers').set('accept-language', 'de').type('form').send({
    csrf,
    kind: 'oidc',
    slug: 'intern',
    name: 'Intern',
    issuer: 'http://127.0.0.1:9/realms/x',
    client_id: 'sso',
    client_secret: 's3cret-value',
  });
  expect(refused.status).toBe(400);
  expect(refused.text).toContain('id="f-issuer-error"');
  expect(refused.text).toContain('IDP_ALLOW_PRIVATE=true');
  expect(refused.text).toContain('IDP_ALLOWED_HOSTS');
  // The settings that would allow it, by name and variable, and a link to the setting (issue 32: a runtime setting).
  expect(refused.text).toContain('idp_allow_private');
  expect(refused.text).toContain('idp_allowed_hosts');
  expect(refused.text).toContain('<a href="/admin/settings#f-idp_allow_private">Ändern Sie sie auf der Seite Einstellungen');
  for (const [name, value] of [
    ['slug', 'intern'],
    ['name', 'Intern'],
    ['issuer', 'http://127.0.0.1:9/realms/x'],
    ['client_id', 'sso'],
  ])
    expect(refused.text).toMatch(new RegExp(`name="${name}" value="${value.replace(/[/.]/g, '\\$&')}"`));
  expect(refused.text).not.toContain('s3cret-value');
  expect(await t.db('identity_providers').where({ slug: 'intern' }).first()).toBeUndefined();
});

/**
 * The API's own refusals in the page's language (issue 31 item 3, issue 32 item 8): each form is refused by a rule
 * of the API (a client policy, an outbound-URL rule...), in German; the message beside the field and in the summary
 * holds no English (no "(Detail: …)" with the API's English reason either), and the JSON API keeps its English.
 */
/** Posts the form (its CSRF value taken from the page) in German; the answer's message beside `field`, every field
 * message shown, and the error summary. */
async function postInGerman(agent: TestAgent, form: string, post: string, body: Record<string, string | string[]>, field: string) {
  const page = await agent.get(form).set('accept-language', 'de');
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  const res = await agent
    .post(post)
    .set('accept-language', 'de')
    .type('form')
    .send({ csrf, ...body });
  return {
    status: res.status,
    message: new RegExp(`<p class="field-error" id="f-${field}-error">([\\s\\S]*?)</p>`).exec(res.text)?.[1],
    shown: res.text.match(/<p class="field-error"[^>]*>[\s\S]*?<\/p>/g) ?? [],
    summary: /<div class="error-summary"[\s\S]*?<\/div>/.exec(res.text)?.[0] ?? '',
  };
}

async function refusedInGerman(agent: TestAgent, form: string, post: string, body: Record<string, string | string[]>, field: string) {
  const { status, message, shown, summary } = await postInGerman(agent, form, post, body, field);
  expect([post, field, status]).toEqual([post, field, 400]);
  expect([post, field, message === undefined ? shown : 'shown']).toEqual([post, field, 'shown']);
  return { message: visibleText(message ?? '').trim(), english: [...leftovers(message ?? ''), ...leftovers(summary)] };
}

test('the application form refused by the client policy says why in German', async () => {
  const { agent } = await makeSignedInUser(t, ['super_admin']);
  await makeApiResource(t, { name: 'Lager-API' });
  const base = {
    name: 'Rechnungen',
    scopes: ['openid'],
    redirect_uris: 'https://app.example.com/cb',
    post_logout_redirect_uris: '',
    allowed_origins: '',
  };
  const cases: Array<[Record<string, string | string[]>, string, string]> = [
    [{ type: 'public', grant_types: ['client_credentials'] }, 'grant_types', 'nur für vertrauliche Anwendungen'],
    [{ type: 'public', grant_types: ['urn:ietf:params:oauth:grant-type:token-exchange'] }, 'grant_types', 'Token-Austausch'],
    [
      { type: 'confidential', grant_types: ['authorization_code'], redirect_uris: '' },
      'redirect_uris',
      'mindestens eine Weiterleitungs-URI',
    ],
    [{ type: 'confidential', grant_types: ['refresh_token'] }, 'grant_types', 'refresh_token ist nur zusammen'],
    [
      { type: 'confidential', grant_types: ['authorization_code'], redirect_uris: 'https://app.example.com/cb#x' },
      'redirect_uris',
      'kein Fragment',
    ],
    [
      { type: 'confidential', grant_types: ['authorization_code'], redirect_uris: 'http://app.example.com/cb' },
      'redirect_uris',
      'http nur an localhost',
    ],
    [
      { type: 'confidential', grant_types: ['authorization_code'], redirect_uris: 'com.example.app:/cb' },
      'redirect_uris',
      'eigenem Schema',
    ],
    [
      { type: 'confidential', grant_types: ['client_credentials'], allowed_resources: ['https://nowhere.example.com'] },
      'allowed_resources',
      'keine registrierte API-Ressource',
    ],
  ];
  const found: string[] = [];
  for (const [body, field, german] of cases) {
    const { message, english } = await refusedInGerman(
      agent,
      '/admin/applications/new',
      '/admin/applications',
      { ...base, ...body },
      field,
    );
    expect([field, message]).toEqual([field, expect.stringContaining(german)]);
    found.push(...english.map((e) => `${field}: ${e}`));
  }
  expect(found).toEqual([]);
  // The JSON API keeps its English message, and only the public fields of a detail.
  const { bearer } = await makeSignedInUser(t, ['super_admin']);
  const res = await request(t.app)
    .post('/api/admin/oauth-clients')
    .set('authorization', bearer)
    .set('accept-language', 'de')
    .send({ name: 'x', type: 'public', grant_types: ['client_credentials'], redirect_uris: ['https://app.example.com/cb'] });
  expect(res.status).toBe(400);
  expect(res.body.details).toEqual([
    { path: 'grant_types', message: 'client_credentials is for confidential clients only (a public client has no secret)' },
  ]);
});

test('webhook, back-channel logout and identity-provider forms refused by outbound and provider rules say why in German', async () => {
  const { agent } = await makeSignedInUser(t, ['super_admin']);
  const app = { name: 'Abmelden', type: 'confidential', grant_types: ['authorization_code'], scopes: ['openid'] };
  // What the SAML form sends: its attribute names filled in.
  const samlAttributes = {
    attr_email: 'email',
    attr_given_name: 'givenName',
    attr_family_name: 'sn',
    attr_name: 'displayName',
    attr_roles: 'roles',
  };
  const idp = { kind: 'oidc', slug: 'firma', name: 'Firma', client_id: 'sso', client_secret: 'geheim-123' };
  const cases: Array<[string, string, Record<string, string | string[]>, string, string]> = [
    [
      '/admin/webhooks/new',
      '/admin/webhooks',
      { url: 'https://user:pw@hooks.example.com/x', events: 'user.created' },
      'url',
      'Zugangsdaten',
    ],
    [
      '/admin/applications/new',
      '/admin/applications',
      { ...app, redirect_uris: 'https://app.example.com/cb', backchannel_logout_uri: 'https://app.example.com/logout#x' },
      'backchannel_logout_uri',
      'kein Fragment',
    ],
    [
      '/admin/applications/new',
      '/admin/applications',
      { ...app, redirect_uris: 'https://app.example.com/cb', backchannel_logout_uri: 'https://u:p@app.example.com/logout' },
      'backchannel_logout_uri',
      'Zugangsdaten',
    ],
    [
      '/admin/identity-providers/new?kind=oidc',
      '/admin/identity-providers',
      { ...idp, issuer: 'https://idp.example.com/x?y=1' },
      'issuer',
      'keine Abfrage',
    ],
    [
      '/admin/identity-providers/new?kind=oidc',
      '/admin/identity-providers',
      { ...idp, issuer: 'https://idp.example.com', scopes: 'profile email' },
      'scopes',
      'müssen openid enthalten',
    ],
    [
      '/admin/identity-providers/new?kind=oidc',
      '/admin/identity-providers',
      { ...idp, issuer: 'ftp://idp.example.com' },
      'issuer',
      'https://',
    ],
    [
      '/admin/saml-apps/new',
      '/admin/saml-apps',
      { ...samlAttributes, name: 'Wiki', metadata_url: 'http://sp.example.com/metadata', sign_response: 'true', sign_assertion: 'true' },
      'metadata_url',
      'https://',
    ],
  ];
  const found: string[] = [];
  for (const [form, post, body, field, german] of cases) {
    const { message, english } = await refusedInGerman(agent, form, post, body, field);
    expect([field, message]).toEqual([field, expect.stringContaining(german)]);
    found.push(...english.map((e) => `${post} ${field}: ${e}`));
  }
  expect(found).toEqual([]);
});

test('role and settings forms refused by the API say why in German', async () => {
  const { agent } = await makeSignedInUser(t, ['super_admin']);
  await makeApiResource(t, { name: 'Lager-API' });
  const role = { name: 'lager', description: '', application: '' };
  const cases: Array<[string, string, Record<string, string | string[]>, string, string]> = [
    ['/admin/roles/new', '/admin/roles', { ...role, permissions: ['nope:nothing'] }, 'permissions', 'keine Berechtigung'],
    [
      '/admin/roles/new',
      '/admin/roles',
      { ...role, permissions: ['users:read'], api_scopes: ['https://nowhere.example.com read'] },
      'api_scopes',
      'keine registrierte API-Ressource',
    ],
    [
      '/admin/settings',
      '/admin/settings',
      { brand_logo_url: 'http://logo.example.com/x.png', editable: 'brand_logo_url' },
      'brand_logo_url',
      'https://',
    ],
    ['/admin/settings', '/admin/settings', { brand_color: 'blau', editable: 'brand_color' }, 'brand_color', 'Hex-Farbe'],
  ];
  const found: string[] = [];
  for (const [form, post, body, field, german] of cases) {
    const { message, english } = await refusedInGerman(agent, form, post, body, field);
    expect([field, message]).toEqual([field, expect.stringContaining(german)]);
    found.push(...english.map((e) => `${post} ${field}: ${e}`));
  }
  expect(found).toEqual([]);
});

/**
 * Issue 32, item 8 (the rest): a schema's own checks (`entity_id must not be empty`, `jwks_uri must be a string`,
 * zod's defaults), the private_key_jwt keys, the SAML endpoints and certificates, and the conflicts (a name, an
 * address or an identifier already taken) in German: each refused form says why beside its field, in German, with
 * no English sentence and no "(Detail: …)".
 */
async function refusedAnyStatus(agent: TestAgent, form: string, post: string, body: Record<string, string | string[]>, field: string) {
  const { status, message, shown, summary } = await postInGerman(agent, form, post, body, field);
  return {
    status,
    message: message === undefined ? `(not beside ${field}: ${shown.join(' | ')})` : visibleText(message).trim(),
    english: [...leftovers(message ?? ''), ...leftovers(summary), ...(/Detail/.test(summary) ? ['(Detail: …) in the summary'] : [])],
  };
}

test('schema checks, client keys, SAML endpoints and certificates, and conflicts are said in German', async () => {
  const { agent } = await makeSignedInUser(t, ['super_admin']);
  const taken = await makeUser(t, { firstName: 'Vergeben', lastName: 'Person' });
  const resource = await makeApiResource(t, { name: 'Vergebene API' });
  await makeRole(t, { name: 'vergeben', permissions: ['users:read'] });
  const keysApp = { name: 'Schlüssel', type: 'private_key_jwt', grant_types: ['client_credentials'], scopes: ['openid'] };
  const saml = {
    name: 'Wiki',
    entity_id: 'https://sp.example.com',
    acs_urls: 'https://sp.example.com/acs',
    attr_email: 'email',
    attr_given_name: 'givenName',
    attr_family_name: 'sn',
    attr_name: 'displayName',
    attr_roles: 'roles',
    sign_response: 'true',
    sign_assertion: 'true',
  };
  // A SAML application whose entity_id is then taken.
  const first = await agent.get('/admin/saml-apps/new');
  const csrf = /name="csrf" value="([^"]+)"/.exec(first.text)?.[1] ?? '';
  expect(
    (
      await agent
        .post('/admin/saml-apps')
        .type('form')
        .send({ csrf, ...saml, entity_id: 'https://vergeben.example.com' })
    ).status,
  ).toBe(303);
  const cases: Array<[string, string, Record<string, string | string[]>, string, number, string]> = [
    ['/admin/applications/new', '/admin/applications', { ...keysApp, jwks: '{"keys":[]}' }, 'jwks', 400, 'mindestens einen Schlüssel'],
    ['/admin/applications/new', '/admin/applications', { ...keysApp, jwks: 'kein JSON' }, 'jwks', 400, 'JSON Web Key Set'],
    [
      '/admin/applications/new',
      '/admin/applications',
      { ...keysApp, jwks: '{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}' },
      'jwks',
      400,
      'öffentlicher Schlüssel',
    ],
    [
      '/admin/applications/new',
      '/admin/applications',
      { ...keysApp, jwks_uri: 'http://keys.example.com/jwks' },
      'jwks_uri',
      400,
      'https-URL',
    ],
    ['/admin/applications/new', '/admin/applications', { ...keysApp, name: 'x'.repeat(101) }, 'name', 400, 'höchstens 100 Zeichen'],
    ['/admin/saml-apps/new', '/admin/saml-apps', { ...saml, entity_id: 'https://sp example.com' }, 'entity_id', 400, 'erwartete Form'],
    ['/admin/saml-apps/new', '/admin/saml-apps', { ...saml, entity_id: '' }, 'entity_id', 400, 'nicht leer'],
    ['/admin/saml-apps/new', '/admin/saml-apps', { ...saml, acs_urls: 'http://sp.example.com/acs' }, 'acs_urls', 400, 'https-URL'],
    ['/admin/saml-apps/new', '/admin/saml-apps', { ...saml, acs_urls: 'https://sp.example.com/acs#x' }, 'acs_urls', 400, 'kein Fragment'],
    ['/admin/saml-apps/new', '/admin/saml-apps', { ...saml, sp_certificate: 'kein Zertifikat' }, 'sp_certificate', 400, 'X.509'],
    [
      '/admin/saml-apps/new',
      '/admin/saml-apps',
      { ...saml, metadata_xml: '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://m.example.com"/>' },
      'metadata_xml',
      400,
      'SPSSODescriptor',
    ],
    [
      '/admin/saml-apps/new',
      '/admin/saml-apps',
      { ...saml, entity_id: 'https://vergeben.example.com' },
      'entity_id',
      409,
      'gibt es bereits',
    ],
    ['/admin/users/new', '/admin/users', { email: taken.email, first_name: 'Neu', last_name: 'Person' }, 'email', 409, 'gibt es bereits'],
    [
      '/admin/users/new',
      '/admin/users',
      { email: 'neu@example.com', first_name: 'y'.repeat(101), last_name: 'P' },
      'first_name',
      400,
      'höchstens 100',
    ],
    [
      '/admin/roles/new',
      '/admin/roles',
      { name: 'vergeben', description: '', application: '', permissions: ['users:read'] },
      'name',
      409,
      'gibt es',
    ],
    [
      '/admin/api-resources/new',
      '/admin/api-resources',
      { identifier: resource.identifier, name: 'Doppelt', scopes: '', access_token_ttl_s: '3600' },
      'identifier',
      409,
      'gibt es bereits',
    ],
    [
      '/admin/api-resources/new',
      '/admin/api-resources',
      { identifier: 'https://lager.example.com', name: 'Lager', scopes: 'openid', access_token_ttl_s: '3600' },
      'scopes',
      400,
      'kein Scope einer API',
    ],
    [
      '/admin/api-resources/new',
      '/admin/api-resources',
      { identifier: 'lager', name: 'Lager', scopes: '', access_token_ttl_s: '3600' },
      'identifier',
      400,
      'absolute URI',
    ],
  ];
  const found: string[] = [];
  for (const [form, post, body, field, status, german] of cases) {
    const got = await refusedAnyStatus(agent, form, post, body, field);
    if (got.status !== status || !got.message.includes(german)) found.push(`${post} ${field}: ${got.status} ${got.message}`);
    found.push(...got.english.map((e) => `${post} ${field}: ${e}`));
  }
  expect(found).toEqual([]);
  // The JSON API keeps its English sentences.
  const { bearer } = await makeSignedInUser(t, ['super_admin']);
  const res = await request(t.app)
    .post('/api/admin/saml-apps')
    .set('authorization', bearer)
    .set('accept-language', 'de')
    .send({ name: 'Wiki', entity_id: '', acs_urls: [{ url: 'https://sp.example.com/acs' }] });
  expect(res.status).toBe(400);
  expect(res.body.details).toContainEqual({ path: 'entity_id', message: 'entity_id must not be empty' });
  expect(JSON.stringify(res.body)).not.toContain('said');
});
