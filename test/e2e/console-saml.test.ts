import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { makeRole } from '../helpers/rbac';
import { makeTestSp } from '../helpers/saml';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The console's SAML applications (src/console/saml/saml.console.ts), each action built from its /api/admin/saml-apps
 * endpoint: the list with the IdP's values to copy, create by hand and from the SP's metadata (pasted, or by URL
 * through the outbound-HTTP rules), edit, delete, the IdP-initiated link and the signing-key rotation; refusals beside
 * the field in English and German; the endpoint's guard.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
const form = (sp: ReturnType<typeof makeTestSp>, extra: Record<string, string> = {}) => ({
  name: 'Wiki',
  entity_id: sp.entityId,
  acs_urls: sp.acsUrl,
  sign_response: 'true',
  sign_assertion: 'true',
  enabled: 'true',
  attr_email: 'mail',
  attr_given_name: 'givenName',
  attr_family_name: 'sn',
  attr_name: 'displayName',
  attr_roles: 'groups',
  ...extra,
});

async function admin(roles = ['super_admin']) {
  const s = await makeSignedInUser(t, roles);
  const csrf = csrfOf((await s.agent.get('/admin/saml-apps/new')).text);
  return { ...s, csrf };
}

test('the list shows the IdP values to copy, the apps with their sign-in link, and is in the navigation', async () => {
  const s = await admin();
  const sp = makeTestSp();
  const created = await request(t.app)
    .post('/api/admin/saml-apps')
    .set('Authorization', s.bearer)
    .send({ name: 'Payroll <b>', entity_id: sp.entityId, acs_urls: [{ url: sp.acsUrl }] })
    .expect(201);
  const page = await s.agent.get('/admin/saml-apps');
  expect(page.status).toBe(200);
  expect(page.text).toContain('<a href="/admin/saml-apps" aria-current="page">SAML</a>');
  expect(page.text).toContain(`>${t.config.oidcIssuer}/saml/metadata<`);
  expect(page.text).toContain(`>${t.config.baseUrl}/saml/sso<`);
  expect(page.text).toContain('-----BEGIN CERTIFICATE-----');
  expect(page.text).toContain('Payroll &lt;b>');
  expect(page.text).toContain(`href="${t.config.baseUrl}/saml/sso?app=${created.body.app.id}"`);
  const de = await s.agent.get('/admin/saml-apps').set('Accept-Language', 'de');
  expect(de.text).toContain('<h1>SAML-Anwendungen</h1>');
  expect(de.text).toContain('Geben Sie der Anwendung diese Werte');
});

test('create by hand, edit, delete after a confirmation: the same rows and audit events as the API', async () => {
  const s = await admin();
  const sp = makeTestSp();
  const made = await s.agent
    .post('/admin/saml-apps')
    .type('form')
    .send({ csrf: s.csrf, ...form(sp, { acs_urls: `${sp.acsUrl}\n3 ${sp.acsUrl}/second`, name_id_format: 'persistent' }) });
  expect(made.status).toBe(303);
  const id = /\/admin\/saml-apps\/([0-9a-f-]{36})$/.exec(made.headers.location!)![1]!;
  const api = await request(t.app).get(`/api/admin/saml-apps/${id}`).set('Authorization', s.bearer).expect(200);
  expect(api.body.app).toMatchObject({
    name: 'Wiki',
    entity_id: sp.entityId,
    acs_urls: [
      { url: sp.acsUrl, index: 0, default: true },
      { url: `${sp.acsUrl}/second`, index: 3, default: false },
    ],
    name_id_format: 'persistent',
    attributes: { email: 'mail', given_name: 'givenName', family_name: 'sn', name: 'displayName', roles: 'groups' },
    want_authn_requests_signed: false,
    enabled: true,
  });
  const detail = await s.agent.get(made.headers.location!);
  expect(detail.text).toContain('SAML application Wiki added.');
  expect(detail.text).toContain(`>0 ${sp.acsUrl}\n3 ${sp.acsUrl}/second</textarea>`);
  expect(detail.text).toContain(`${t.config.baseUrl}/saml/sso?app=${id}`);

  // Edit: unchecking "enabled" disables it (an unchecked box is not sent).
  const { enabled: _omit, ...disabled } = form(sp, { name: 'Wiki 2' });
  const saved = await s.agent
    .post(`/admin/saml-apps/${id}`)
    .type('form')
    .send({ csrf: s.csrf, ...disabled });
  expect(saved.status).toBe(303);
  expect(await t.db('saml_apps').where({ id }).first('name', 'enabled')).toEqual({ name: 'Wiki 2', enabled: false });

  const ask = await s.agent.post(`/admin/saml-apps/${id}/delete`).type('form').send({ csrf: s.csrf });
  expect(ask.status).toBe(200);
  expect(ask.text).toContain('Delete the SAML application Wiki 2?');
  expect(await t.db('saml_apps').where({ id }).first()).toBeDefined();
  const gone = await s.agent.post(`/admin/saml-apps/${id}/delete`).type('form').send({ csrf: s.csrf, confirm: 'yes' });
  expect([gone.status, gone.headers.location]).toEqual([303, '/admin/saml-apps']);
  expect(await t.db('saml_apps').where({ id }).first()).toBeUndefined();
  const events = await t
    .db('audit_events')
    .where('detail', '@>', JSON.stringify({ app_id: id }))
    .orderBy('occurred_at')
    .pluck('type');
  expect(events).toEqual(['saml.app.created', 'saml.app.changed', 'saml.app.deleted']);
  expect((await s.agent.get(`/admin/saml-apps/${id}`)).status).toBe(404);
  expect((await s.agent.get('/admin/saml-apps/not-a-uuid')).status).toBe(404);
});

test('create from pasted SP metadata: entity id, ACS URL and certificate come from it', async () => {
  const s = await admin();
  const sp = makeTestSp();
  const cert = sp.key.certificatePem.replace(/-----[^-]+-----|\s/g, '');
  const encryption = makeTestSp().key.certificatePem.replace(/-----[^-]+-----|\s/g, '');
  const metadata = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${sp.entityId}">
  <md:SPSSODescriptor AuthnRequestsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${encryption}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${sp.acsUrl}" index="2"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>`;
  // The fields by hand are ignored when metadata is given.
  const res = await s.agent
    .post('/admin/saml-apps')
    .type('form')
    .send({ csrf: s.csrf, ...form(makeTestSp(), { name: 'From metadata', metadata_xml: metadata }) });
  expect(res.status).toBe(303);
  const row = await t.db('saml_apps').where({ entity_id: sp.entityId }).first();
  expect(row).toMatchObject({ name: 'From metadata', want_authn_requests_signed: true });
  expect(row.sp_certificate).toContain(cert.slice(0, 64));
  expect(row.sp_encryption_certificate).toContain(encryption.slice(0, 64));

  // Saving the form as shown (a rename) keeps what the metadata gave, the encryption certificate included.
  const page = (await s.agent.get(`/admin/saml-apps/${row.id}`)).text;
  const shown = formValues(page);
  expect(shown.sp_encryption_certificate).toContain('BEGIN CERTIFICATE');
  const saved = await s.agent
    .post(`/admin/saml-apps/${row.id}`)
    .type('form')
    .send({ ...shown, name: 'Renamed', encrypt_assertion: 'true' });
  expect(saved.status).toBe(303);
  const after = await t.db('saml_apps').where({ id: row.id }).first();
  expect(after).toMatchObject({
    name: 'Renamed',
    entity_id: sp.entityId,
    sp_certificate: row.sp_certificate,
    sp_encryption_certificate: row.sp_encryption_certificate,
    want_authn_requests_signed: true,
    encrypt_assertion: true,
  });
  expect(after.acs_urls).toEqual(row.acs_urls);
});

/** The fields of the app's form as the page shows them (inputs, checked boxes, selected options, text areas). */
function formValues(html: string): Record<string, string> {
  const start = html.indexOf('<form method="post" action="/admin/saml-apps/');
  const form = html.slice(start, html.indexOf('</form>', start));
  const unescape = (v: string) =>
    v
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&');
  const out: Record<string, string> = {};
  for (const m of form.matchAll(/<input ([^>]*)>/g)) {
    const name = /name="([^"]+)"/.exec(m[1]!)?.[1];
    const value = /value="([^"]*)"/.exec(m[1]!)?.[1] ?? '';
    if (!name || (m[1]!.includes('type="checkbox"') && !/\bchecked\b/.test(m[1]!))) continue;
    out[name] = unescape(value);
  }
  for (const m of form.matchAll(/<textarea [^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/textarea>/g)) out[m[1]!] = unescape(m[2]!);
  for (const m of form.matchAll(/<select [^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g)) {
    out[m[1]!] = /<option value="([^"]*)" selected/.exec(m[2]!)?.[1] ?? '';
  }
  return out;
}

test('refusals beside the field, in English and German with the error summary; a private metadata URL is never fetched', async () => {
  const s = await admin();
  const sp = makeTestSp();
  const bad = await s.agent
    .post('/admin/saml-apps')
    .type('form')
    .send({ csrf: s.csrf, ...form(sp, { acs_urls: 'javascript:alert(1)', attr_roles: '' }) });
  expect(bad.status).toBe(400);
  expect(bad.text).toContain('id="error-summary"');
  expect(bad.text).toMatch(/id="f-acs_urls-error">acs_urls\[\]\.url /);
  expect(bad.text).toContain('id="f-attr_roles-error">attributes.roles must not be empty');
  expect(bad.text).toContain('javascript:alert(1)</textarea>');

  const wantsSigned = await s.agent
    .post('/admin/saml-apps')
    .set('Accept-Language', 'de')
    .type('form')
    .send({ csrf: s.csrf, ...form(sp, { want_authn_requests_signed: 'true' }) });
  expect(wantsSigned.status).toBe(400);
  expect(wantsSigned.text).toMatch(/<title>Fehler: /);
  expect(wantsSigned.text).toContain('id="f-want_authn_requests_signed-error"');
  // In German, the catalogue's sentence of the refusal (issue 32), not the API's English.
  expect(wantsSigned.text).toContain('>Signierte Anfragen brauchen das Zertifikat des Dienstanbieters.</p>');
  expect(wantsSigned.text).not.toContain('want_authn_requests_signed needs sp_certificate');

  for (const url of ['https://127.0.0.1/metadata', 'https://169.254.169.254/latest', 'https://[::1]/md', 'https://10.0.0.1/md']) {
    const res = await s.agent
      .post('/admin/saml-apps')
      .type('form')
      .send({ csrf: s.csrf, ...form(sp, { metadata_url: url }) });
    expect(res.status).toBe(400);
    expect(res.text).toContain('id="f-metadata_url-error"');
  }
  expect(await t.db('saml_apps').where({ entity_id: sp.entityId }).first()).toBeUndefined();
});

test('rotating the signing key asks first, then publishes both certificates; only super_admin may', async () => {
  const s = await admin();
  const before = (await request(t.app).get('/api/admin/saml-apps').set('Authorization', s.bearer)).body.idp.certificates as string[];
  const ask = await s.agent.post('/admin/saml-apps/rotate-key').type('form').send({ csrf: s.csrf });
  expect(ask.status).toBe(200);
  expect(ask.text).toContain('Rotate the SAML signing key?');
  expect(ask.text).toContain('href="/admin/saml-apps"');
  const done = await s.agent.post('/admin/saml-apps/rotate-key').type('form').send({ csrf: s.csrf, confirm: 'yes' });
  expect([done.status, done.headers.location]).toEqual([303, '/admin/saml-apps']);
  const after = (await request(t.app).get('/api/admin/saml-apps').set('Authorization', s.bearer)).body.idp.certificates as string[];
  expect(after.length).toBe(Math.min(before.length + 1, after.length));
  expect(after[0]).not.toBe(before[0]);
  expect(after).toContain(before[0]);
  const page = await s.agent.get('/admin/saml-apps');
  expect(page.text).toContain('SAML signing key rotated');
  expect(page.text).toContain('Previous certificate');

  const plainAdmin = await admin(['admin']);
  const refused = await plainAdmin.agent.post('/admin/saml-apps/rotate-key').type('form').send({ csrf: plainAdmin.csrf, confirm: 'yes' });
  const api = await request(t.app).post('/api/admin/saml-apps/signing-key/rotate').set('Authorization', plainAdmin.bearer);
  expect([refused.status, api.status]).toEqual([403, 403]);
  const current = (await request(t.app).get('/api/admin/saml-apps').set('Authorization', s.bearer)).body.idp.certificates[0];
  expect(current).toBe(after[0]);
});

test('the guard is the endpoint one: oauth_clients:read reads, only oauth_clients:write changes', async () => {
  // A manager (admin tier, so the console opens) given oauth_clients:read by a role of its own.
  const reader = await makeSignedInUser(t, ['manager']);
  await t.db('user_roles').insert({ user_id: reader.user.id, role_id: (await makeRole(t, { permissions: ['oauth_clients:read'] })).id });
  const list = await reader.agent.get('/admin/saml-apps');
  expect(list.status).toBe(200);
  expect(list.text).toContain('href="/admin/saml-apps"');
  const sp = makeTestSp();
  const csrf = csrfOf(list.text);
  const post = await reader.agent
    .post('/admin/saml-apps')
    .type('form')
    .send({ csrf, ...form(sp) });
  expect(post.status).toBe(403);
  expect(await t.db('saml_apps').where({ entity_id: sp.entityId }).first()).toBeUndefined();
  const none = await makeSignedInUser(t, ['manager']);
  expect((await none.agent.get('/admin/saml-apps')).status).toBe(403);
  expect((await none.agent.get('/admin/webhooks')).text).not.toContain('href="/admin/saml-apps"');
});
