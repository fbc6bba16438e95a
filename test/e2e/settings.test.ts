import request from 'supertest';
import { SETTINGS } from '../../src/declarations/settings';
import { makeSignedInUser, uniqueEmail } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §18: the runtime settings through GET|PATCH /api/admin/settings. Environment wins and locks; a change
 * applies at once on this instance (the two-instance case is test/e2e/settings-live.test.ts), is audited with before
 * and after (secrets masked) and reaches what reads the setting: pages, discovery, CORS, registration, mail.
 */
let t: TestApp;
let admin: string;
const api = () => request(t.app);

/** The §18 list, at least. */
const CONTRACT_SETTINGS = [
  'registration',
  'client_registration',
  'client_id_metadata_documents',
  'mfa_required_for_admins',
  'brand_name',
  'brand_logo_url',
  'brand_color',
  'default_locale',
  'allowed_origins',
  'webhook_allow_private',
  'password_policy',
  'email_sign_in',
  'require_pushed_authorization_requests',
  'dpop_nonce_required',
  'invitation_ttl_hours',
  'smtp_url',
  'mail_from',
];

beforeAll(async () => {
  // BRAND_NAME pins brand_name; ALLOWED_ORIGINS is left unset (TEST_ENV sets it) so that the setting is editable.
  t = await createTestApp({ env: { BRAND_NAME: 'Pinned Corp', ALLOWED_ORIGINS: '' } });
  admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
});
afterAll(async () => {
  await t.close();
});

type Entry = {
  name: string;
  value: unknown;
  source: string;
  read_only: boolean;
  env_var: string;
  secret: boolean;
  sensitive: boolean;
  set?: boolean;
};
const entryOf = (body: { settings: Entry[] }, name: string) => body.settings.find((s) => s.name === name)!;
const patch = (body: Record<string, unknown>) => api().patch('/api/admin/settings').set('Authorization', admin).send(body);

describe('GET /api/admin/settings', () => {
  test('lists every setting of §18 with its value, source, variable; the pinned one read-only; the secret without value', async () => {
    const res = await api().get('/api/admin/settings').set('Authorization', admin);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toContain('no-store');
    const names = (res.body.settings as Entry[]).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(CONTRACT_SETTINGS));
    expect(entryOf(res.body, 'registration')).toEqual({
      name: 'registration',
      value: 'open',
      source: 'default',
      read_only: false,
      env_var: 'REGISTRATION',
      secret: false,
      sensitive: true,
    });
    expect(entryOf(res.body, 'brand_name')).toEqual({
      name: 'brand_name',
      value: 'Pinned Corp',
      source: 'environment',
      read_only: true,
      env_var: 'BRAND_NAME',
      secret: false,
      sensitive: false,
    });
    expect(entryOf(res.body, 'smtp_url')).toEqual({
      name: 'smtp_url',
      value: null,
      set: false,
      source: 'default',
      read_only: false,
      env_var: 'SMTP_URL',
      secret: true,
      sensitive: true,
    });
    expect(entryOf(res.body, 'invitation_ttl_hours').value).toBe(72);
    expect(entryOf(res.body, 'password_policy').value).toEqual({ min_length: 6, breached_check: false, reject_email_local_part: false });
  });

  test('environment: the start-up configuration by name, read-only; a secret as set without its value, credentials masked', async () => {
    const res = await api().get('/api/admin/settings').set('Authorization', admin);
    const environment = res.body.environment as Array<{ name: string; variable: string | null; value: string | null; set: boolean }>;
    const byName = new Map(environment.map((e) => [e.name, e]));
    expect(environment.map((e) => e.name)).toEqual([...byName.keys()].sort((a, b) => a.localeCompare(b)));
    expect(byName.get('baseUrl')).toEqual({ name: 'baseUrl', variable: 'BASE_URL', value: t.config.baseUrl, set: true });
    expect(byName.get('jwtAccessSecret')).toEqual({ name: 'jwtAccessSecret', variable: 'JWT_ACCESS_SECRET', value: null, set: true });
    // A value the server derives names no variable.
    expect(byName.get('baseOrigin')).toMatchObject({ name: 'baseOrigin', variable: null });
    expect(byName.has('pinnedSettings')).toBe(false);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(t.config.jwtAccessSecret);
    expect(text).not.toContain(t.config.keysSecret);
  });

  test('needs system:manage_users: 401 without a token, 403 for a user or a manager', async () => {
    expect((await api().get('/api/admin/settings')).status).toBe(401);
    const user = await makeSignedInUser(t);
    expect((await api().get('/api/admin/settings').set('Authorization', user.bearer)).status).toBe(403);
    const manager = await makeSignedInUser(t, ['manager']);
    expect((await patch({ registration: 'closed' }).set('Authorization', manager.bearer)).status).toBe(403);
  });
});

describe('PATCH /api/admin/settings refuses, naming the setting', () => {
  test.each([
    [{ brand_name: 'Other' }, 'brand_name', /brand_name is set by the environment variable BRAND_NAME/],
    [{ colour: 'red' }, 'colour', /colour is not a setting/],
    [{ registration: 'maybe' }, 'registration', /registration: must be open or closed/],
    [{ brand_color: '#ffcc00' }, 'brand_color', /brand_color: #ffcc00 fails WCAG AA contrast/],
    [{ brand_logo_url: 'http://cdn.test/logo.png' }, 'brand_logo_url', /brand_logo_url: must be an https:\/\/ URL/],
    [{ allowed_origins: ['https://ok.test', 'nope'] }, 'allowed_origins.1', /allowed_origins: "nope" is not an http\(s\) origin/],
    [{ password_policy: { min_length: 5 } }, 'password_policy.min_length', /password_policy: min_length: min_length must be at least 6/],
    [{ invitation_ttl_hours: 0 }, 'invitation_ttl_hours', /invitation_ttl_hours: must be at least 1/],
    [{ smtp_url: 'mail.example.com' }, 'smtp_url', /smtp_url: must be an smtp:\/\/ or smtps:\/\/ URL/],
    [{ default_locale: 'fr' }, 'default_locale', /default_locale: must be one of en, de/],
  ])('%j: 400 validation_error at %s', async (body, path, message) => {
    const before = await t.db('settings').count<{ count: string }[]>('* as count');
    const res = await patch(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(res.body.message).toMatch(message);
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await t.db('settings').count<{ count: string }[]>('* as count')).toEqual(before);
  });

  test('one bad setting stores none of the others', async () => {
    const res = await patch({ registration: 'closed', brand_color: 'purple' });
    expect(res.status).toBe(400);
    expect(await t.db('settings').where({ name: 'registration' }).first()).toBeUndefined();
  });
});

describe('PATCH /api/admin/settings applies at once and is audited', () => {
  test('registration closed: the register API and page refuse at once; open again: they accept', async () => {
    const res = await patch({ registration: 'closed' });
    expect(res.status).toBe(200);
    expect(entryOf(res.body, 'registration')).toMatchObject({ value: 'closed', source: 'stored' });
    const refused = await api()
      .post('/api/auth/register')
      .send({ email: uniqueEmail(), password: 'a-good-password', first_name: 'A', last_name: 'B' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('registration_closed');
    expect((await api().get('/register')).status).toBe(404);

    expect((await patch({ registration: 'open' })).status).toBe(200);
    const accepted = await api()
      .post('/api/auth/register')
      .send({ email: uniqueEmail(), password: 'a-good-password', first_name: 'A', last_name: 'B' });
    expect(accepted.status).toBe(201);
  });

  test('settings.changed records before and after', async () => {
    await patch({ invitation_ttl_hours: 48, brand_color: '#7C3AED' });
    const event = await t.db('audit_events').where({ type: 'settings.changed' }).orderBy('occurred_at', 'desc').first();
    expect(event.detail).toEqual({
      changes: [
        { name: 'invitation_ttl_hours', before: 72, after: 48 },
        { name: 'brand_color', before: '#2563eb', after: '#7c3aed' },
      ],
    });
    expect(event.actor_id).toBeTruthy();
    // What an admin reads: the audit API answers the change with who made it, and the console's audit log shows each
    // setting with its value before and after as labelled fields, in English and German.
    const viewer = await makeSignedInUser(t, ['super_admin']);
    const listed = await api().get('/api/admin/audit-events').query({ type: 'settings.changed' }).set('Authorization', viewer.bearer);
    expect(listed.status).toBe(200);
    expect(listed.body.events[0]).toMatchObject({
      type: 'settings.changed',
      actor: expect.objectContaining({ id: event.actor_id }),
      detail: { changes: expect.arrayContaining([{ name: 'invitation_ttl_hours', before: 72, after: 48 }]) },
    });
    const page = await viewer.agent.get('/admin/audit').query({ type: 'settings.changed' });
    // Each change reads what, before, after (whatever order the database keeps the recorded keys in).
    expect(page.text).toContain(
      '<dt>Changes</dt><dd>Name: invitation_ttl_hours; Before: 72; After: 48, Name: brand_color; Before: #2563eb; After: #7c3aed</dd>',
    );
    const german = await viewer.agent.get('/admin/audit').query({ type: 'settings.changed' }).set('Accept-Language', 'de');
    expect(german.text).toContain('Vorher: 72; Nachher: 48');
    // The favicon and the pages follow the new colour.
    const favicon = await api()
      .get('/favicon.ico')
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => done(null, text));
      });
    expect(favicon.body).toContain('fill="#7c3aed"');
    expect((await api().get('/login')).text).toContain('#7c3aed');
  });

  test('smtp_url is write-only: never answered, audited masked, and test-mail uses the sender in force', async () => {
    const secretUrl = 'smtp://mailer:very-secret-password@smtp.example.test:587';
    const res = await patch({ smtp_url: secretUrl, mail_from: 'sso@acme.test' });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).not.toContain('very-secret-password');
    expect(entryOf(res.body, 'smtp_url')).toMatchObject({ value: null, set: true, source: 'stored' });
    const event = await t.db('audit_events').where({ type: 'settings.changed' }).orderBy('occurred_at', 'desc').first();
    expect(JSON.stringify(event.detail)).not.toContain('very-secret-password');
    expect(event.detail.changes).toEqual(
      expect.arrayContaining([
        { name: 'smtp_url', before: null, after: '••••••' },
        { name: 'mail_from', before: 'no-reply@localhost', after: 'sso@acme.test' },
      ]),
    );
    const list = await api().get('/api/admin/settings').set('Authorization', admin);
    expect(JSON.stringify(list.body)).not.toContain('very-secret-password');

    t.mails.length = 0;
    const sent = await api().post('/api/admin/settings/test-mail').set('Authorization', admin).send({ to: 'ops@acme.test' });
    expect(sent.status).toBe(202);
    expect(t.mails).toEqual([expect.objectContaining({ to: 'ops@acme.test', subject: 'Test mail from Pinned Corp' })]);
    expect(t.mails[0]!.text).toContain('sso@acme.test');

    const bad = await api().post('/api/admin/settings/test-mail').set('Authorization', admin).send({ to: 'not-an-address' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_error');
    expect((await patch({ smtp_url: null })).status).toBe(200);
  });

  test('client_registration and client_id_metadata_documents: discovery and the register endpoint follow', async () => {
    const discovery = async () => (await api().get('/.well-known/openid-configuration')).body;
    expect((await discovery()).registration_endpoint).toBeUndefined();
    expect(
      (
        await api()
          .post('/api/oauth/register')
          .send({ redirect_uris: ['http://127.0.0.1/cb'] })
      ).status,
    ).toBe(404);
    await patch({ client_registration: 'open', client_id_metadata_documents: true });
    const doc = await discovery();
    expect(doc.registration_endpoint).toBe('http://sso.test/api/oauth/register');
    expect(doc.client_id_metadata_document_supported).toBe(true);
    expect((await api().get('/api/oauth/.well-known/oauth-authorization-server')).body.registration_endpoint).toBeDefined();
    const registered = await api()
      .post('/api/oauth/register')
      .send({ redirect_uris: ['http://127.0.0.1/cb'], client_name: 'Live', token_endpoint_auth_method: 'none' });
    expect(registered.status).toBe(201);
    await patch({ client_registration: 'off', client_id_metadata_documents: false });
    expect((await discovery()).registration_endpoint).toBeUndefined();
  });

  test('allowed_origins: credentialed CORS and the cookie origin check accept the new origin at once', async () => {
    const origin = 'https://spa.acme.test';
    const before = await api().get('/api/auth/me').set('Origin', origin);
    expect(before.headers['access-control-allow-origin']).toBeUndefined();
    await patch({ allowed_origins: [`${origin}/ignored`, 'http://localhost:5173'] });
    const list = await api().get('/api/admin/settings').set('Authorization', admin);
    expect(entryOf(list.body, 'allowed_origins').value).toEqual([origin, 'http://localhost:5173']);
    const after = await api().options('/api/auth/me').set('Origin', origin).set('Access-Control-Request-Method', 'GET');
    expect(after.headers['access-control-allow-origin']).toBe(origin);
    expect(after.headers['access-control-allow-credentials']).toBe('true');
    await patch({ allowed_origins: [] });
    const removed = await api().get('/api/auth/me').set('Origin', origin);
    expect(removed.headers['access-control-allow-origin']).toBeUndefined();
  });

  test('default_locale and brand_logo_url: pages speak German without Accept-Language; the CSP allows the logo', async () => {
    await patch({ default_locale: 'de', brand_logo_url: 'https://cdn.acme.test/logo.svg' });
    const page = await api().get('/login');
    expect(page.text).toContain('<html lang="de"');
    expect(page.text).toContain('https://cdn.acme.test/logo.svg');
    expect(page.headers['content-security-policy']).toContain("img-src 'self' data: https://cdn.acme.test");
    // A browser asking for English still gets English.
    expect((await api().get('/login').set('Accept-Language', 'en')).text).toContain('<html lang="en"');
    await patch({ default_locale: 'en', brand_logo_url: null });
    expect((await api().get('/login')).headers['content-security-policy']).not.toContain('cdn.acme.test');
  });

  // Last: it locks this admin (who has no second factor) out of the admin API.
  test('mfa_required_for_admins: an admin without a second factor is refused at once', async () => {
    expect((await patch({ mfa_required_for_admins: true })).status).toBe(200);
    const refused = await api().get('/api/admin/settings').set('Authorization', admin);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('mfa_required');
  });
});

/**
 * Fourth review (docs/settings.md, "Who may change what"): system:manage_users (role admin) must not change the settings
 * that hand over accounts or weaken the server; they need system:manage_settings, held only by super_admin by default.
 */
describe('sensitive settings need system:manage_settings', () => {
  let t2: TestApp;
  let adminRole: string;
  let superAdmin: string;
  const api2 = () => request(t2.app);
  const patchAs = (bearer: string, body: Record<string, unknown>) =>
    api2().patch('/api/admin/settings').set('Authorization', bearer).send(body);

  beforeAll(async () => {
    t2 = await createTestApp({ env: { ALLOWED_ORIGINS: '' } });
    adminRole = (await makeSignedInUser(t2, ['admin'])).bearer;
    superAdmin = (await makeSignedInUser(t2, ['super_admin'])).bearer;
  });
  afterAll(async () => {
    await t2.close();
  });

  test('GET marks each setting sensitive or not, and role admin may read them all', async () => {
    const res = await api2().get('/api/admin/settings').set('Authorization', adminRole);
    expect(res.status).toBe(200);
    const sensitive = (res.body.settings as Entry[]).filter((e) => e.sensitive).map((e) => e.name);
    expect([...sensitive].sort()).toEqual(
      [
        'allowed_origins',
        'client_id_metadata_documents',
        'client_registration',
        'dpop_nonce_required',
        'email_sign_in',
        'idp_allow_private',
        'idp_allowed_hosts',
        'mail_from',
        'mfa_required_for_admins',
        'password_policy',
        'registration',
        'require_pushed_authorization_requests',
        'smtp_url',
        'webhook_allow_private',
      ].sort(),
    );
    expect(sensitive).toEqual(SETTINGS.filter((d) => d.sensitive).map((d) => d.name));
  });

  test('role admin PATCHing smtp_url: 403 forbidden naming it, nothing of the PATCH stored', async () => {
    const res = await patchAs(adminRole, { smtp_url: 'smtp://attacker.test:25', invitation_ttl_hours: 24 });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
    expect(res.body.message).toMatch(/smtp_url/);
    expect(res.body.message).toMatch(/system:manage_settings/);
    expect(await t2.db('settings').whereIn('name', ['smtp_url', 'invitation_ttl_hours'])).toEqual([]);
    expect(await t2.db('audit_events').where({ type: 'settings.changed' })).toEqual([]);
  });

  test.each([
    [{ mfa_required_for_admins: false }, 'mfa_required_for_admins'],
    [{ allowed_origins: ['https://attacker.test'] }, 'allowed_origins'],
    [{ webhook_allow_private: true }, 'webhook_allow_private'],
    [{ mail_from: 'security@attacker.test' }, 'mail_from'],
    [{ client_registration: 'open' }, 'client_registration'],
  ])('role admin PATCHing %j: 403 naming %s', async (body, name) => {
    const res = await patchAs(adminRole, body);
    expect(res.status).toBe(403);
    expect(res.body.message).toContain(name);
    expect(await t2.db('settings').where({ name }).first()).toBeUndefined();
  });

  test('role admin PATCHing brand_name (not sensitive): 200 and stored', async () => {
    const res = await patchAs(adminRole, { brand_name: 'Acme Admins' });
    expect(res.status).toBe(200);
    expect(entryOf(res.body, 'brand_name')).toMatchObject({ value: 'Acme Admins', source: 'stored', sensitive: false });
    expect(await t2.db('settings').where({ name: 'brand_name' }).first()).toMatchObject({ value: 'Acme Admins' });
  });

  test('super_admin PATCHing smtp_url: 200 and stored', async () => {
    const res = await patchAs(superAdmin, { smtp_url: 'smtp://mailer:pw@smtp.acme.test:587' });
    expect(res.status).toBe(200);
    expect(entryOf(res.body, 'smtp_url')).toMatchObject({ set: true, source: 'stored', sensitive: true });
    expect(await t2.db('settings').where({ name: 'smtp_url' }).first()).toBeDefined();
    expect((await patchAs(superAdmin, { smtp_url: null })).status).toBe(200);
  });

  test('test-mail: role admin 403 and no mail; super_admin 202', async () => {
    t2.mails.length = 0;
    const refused = await api2().post('/api/admin/settings/test-mail').set('Authorization', adminRole).send({ to: 'ops@acme.test' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    expect(t2.mails).toEqual([]);
    const sent = await api2().post('/api/admin/settings/test-mail').set('Authorization', superAdmin).send({ to: 'ops@acme.test' });
    expect(sent.status).toBe(202);
    expect(t2.mails).toEqual([expect.objectContaining({ to: 'ops@acme.test' })]);
  });
});
