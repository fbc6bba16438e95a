import request from 'supertest';
import { decrypt } from 'xml-encryption';
import { makeSignedInUser } from '../helpers/factories';
import { makeTestSp, readPostForm } from '../helpers/saml';
import { createTestApp, type TestApp } from '../helpers/test-app';

/** CONTRACT §19: /api/admin/saml-apps, from fields and from SP metadata; the rules of each field; the guard. */
let t: TestApp;
let admin: string;
beforeAll(async () => {
  t = await createTestApp();
  admin = (await makeSignedInUser(t, ['admin'])).bearer;
});
afterAll(async () => t?.close());

const post = (body: Record<string, unknown>, bearer = admin) =>
  request(t.app).post('/api/admin/saml-apps').set('Authorization', bearer).send(body);

test('create from fields: the defaults of §19; list with the IdP metadata URL and certificate; get, replace, delete; audited', async () => {
  const sp = makeTestSp();
  const res = await post({ name: 'Wiki', entity_id: sp.entityId, acs_urls: [{ url: sp.acsUrl }] });
  expect(res.status).toBe(201);
  const app = res.body.app;
  expect(app).toMatchObject({
    name: 'Wiki',
    entity_id: sp.entityId,
    acs_urls: [{ url: sp.acsUrl, binding: 'HTTP-POST', index: 0, default: true }],
    slo_url: null,
    name_id_format: 'emailAddress',
    attributes: {
      email: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
      given_name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname',
      family_name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname',
      name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
      roles: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role',
    },
    sign_response: true,
    sign_assertion: true,
    encrypt_assertion: false,
    want_authn_requests_signed: false,
    sp_certificate: null,
    enabled: true,
    idp_initiated_url: `${t.config.baseUrl}/saml/sso?app=${app.id}`,
  });
  const list = await request(t.app).get('/api/admin/saml-apps').set('Authorization', admin);
  expect(list.status).toBe(200);
  expect(list.body.apps.map((a: { id: string }) => a.id)).toContain(app.id);
  expect(list.body.idp.metadata_url).toBe(`${t.config.oidcIssuer}/saml/metadata`);
  expect(list.body.idp.entity_id).toBe(`${t.config.oidcIssuer}/saml/metadata`);
  expect(list.body.idp.certificates[0]).toContain('BEGIN CERTIFICATE');

  const put = await request(t.app)
    .put(`/api/admin/saml-apps/${app.id}`)
    .set('Authorization', admin)
    .send({
      name: 'Wiki 2',
      entity_id: sp.entityId,
      acs_urls: [{ url: sp.acsUrl }],
      name_id_format: 'persistent',
      attributes: { email: 'mail' },
      enabled: false,
    });
  expect(put.status).toBe(200);
  expect(put.body.app).toMatchObject({ name: 'Wiki 2', name_id_format: 'persistent', enabled: false });
  expect(put.body.app.attributes.email).toBe('mail');
  expect(put.body.app.attributes.roles).toBe('http://schemas.microsoft.com/ws/2008/06/identity/claims/role');
  expect((await request(t.app).get(`/api/admin/saml-apps/${app.id}`).set('Authorization', admin)).body.app.name).toBe('Wiki 2');
  expect((await request(t.app).delete(`/api/admin/saml-apps/${app.id}`).set('Authorization', admin)).status).toBe(204);
  expect((await request(t.app).get(`/api/admin/saml-apps/${app.id}`).set('Authorization', admin)).status).toBe(404);
  await t.ctx.events.idle?.();
  const types = (await t.db('audit_events').where('type', 'like', 'saml.app.%').select('type')).map((r) => r.type);
  expect(types).toEqual(expect.arrayContaining(['saml.app.created', 'saml.app.changed', 'saml.app.deleted']));
});

test('create from pasted SP metadata: entity id, ACS URLs, SLO URL and binding, certificate, AuthnRequestsSigned', async () => {
  const sp = makeTestSp();
  const body = sp.key.certificatePem.replace(/-----[^-]+-----|\s/g, '');
  const metadata = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${sp.entityId}">
  <md:SPSSODescriptor AuthnRequestsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${body}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${sp.sloUrl}"/>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact" Location="${sp.acsUrl}/artifact" index="0"/>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${sp.acsUrl}" index="1" isDefault="true"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>`;
  const res = await post({ name: 'From metadata', metadata_xml: metadata });
  expect(res.status).toBe(201);
  expect(res.body.app).toMatchObject({
    entity_id: sp.entityId,
    acs_urls: [{ url: sp.acsUrl, binding: 'HTTP-POST', index: 1, default: true }],
    slo_url: sp.sloUrl,
    slo_binding: 'HTTP-POST',
    want_authn_requests_signed: true,
    name_id_format: 'persistent',
  });
  expect(res.body.app.sp_certificate).toContain(body.slice(0, 64));
  // The same entity id again is a conflict.
  expect((await post({ name: 'Again', metadata_xml: metadata })).status).toBe(409);
  // Metadata with a DTD is refused like any SAML message.
  const dtd = await post({ name: 'DTD', metadata_xml: `<!DOCTYPE x [<!ENTITY e "e">]>${metadata.replace('<?xml version="1.0"?>', '')}` });
  expect(dtd.status).toBe(400);
  expect(dtd.body.details[0]).toEqual({ path: 'metadata_xml', message: 'the message contains a document type declaration' });
});

test('encrypt_assertion: to sp_certificate, or to the encryption certificate the metadata gives when it differs', async () => {
  const sp = makeTestSp();
  const byHand = await post({
    name: 'Encrypted',
    entity_id: sp.entityId,
    acs_urls: [{ url: sp.acsUrl }],
    sp_certificate: sp.key.certificatePem,
    encrypt_assertion: true,
  });
  expect(byHand.status).toBe(201);
  expect(byHand.body.app).toMatchObject({ encrypt_assertion: true, sp_encryption_certificate: null });

  const other = makeTestSp();
  const b64 = (pem: string) => pem.replace(/-----[^-]+-----|\s/g, '');
  const kd = (use: string, pem: string) =>
    `<md:KeyDescriptor use="${use}"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${b64(pem)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
  const metadata = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${other.entityId}">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    ${kd('signing', other.key.certificatePem)}${kd('encryption', sp.key.certificatePem)}
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${other.acsUrl}" index="0"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>`;
  const fromMetadata = await post({ name: 'Encrypted from metadata', metadata_xml: metadata, encrypt_assertion: true });
  expect(fromMetadata.status).toBe(201);
  expect(fromMetadata.body.app.sp_certificate).toContain(b64(other.key.certificatePem).slice(0, 64));
  expect(fromMetadata.body.app.sp_encryption_certificate).toContain(b64(sp.key.certificatePem).slice(0, 64));

  // A sign-in to it: the assertion opens with the encryption key only.
  const person = await makeSignedInUser(t, []);
  const page = await person.agent.get(`/saml/sso?app=${fromMetadata.body.app.id}`);
  const xml = Buffer.from(readPostForm(page.text).message, 'base64').toString('utf8');
  const data = /<xenc:EncryptedData[\s\S]*<\/xenc:EncryptedData>/.exec(xml)![0];
  const open = (key: string) =>
    new Promise<string>((resolve, reject) => decrypt(data, { key }, (err, out) => (err ? reject(err) : resolve(out!))));
  expect(await open(sp.key.privateKeyPem)).toContain(`>${person.user.email}</saml:NameID>`);
  await expect(open(other.key.privateKeyPem)).rejects.toThrow();
});

test.each([
  [{ entity_id: 'https://x.test/sp', acs_urls: [{ url: 'http://x.test/acs' }] }, 'acs_urls.0.url'],
  [{ entity_id: 'https://x.test/sp', acs_urls: [{ url: 'https://x.test/acs#f' }] }, 'acs_urls.0.url'],
  [{ entity_id: 'https://x.test/sp' }, 'acs_urls'],
  [{ acs_urls: [{ url: 'https://x.test/acs' }] }, 'entity_id'],
  [
    { entity_id: 'https://x.test/sp', acs_urls: [{ url: 'https://x.test/acs' }], want_authn_requests_signed: true },
    'want_authn_requests_signed',
  ],
  [{ entity_id: 'https://x.test/sp', acs_urls: [{ url: 'https://x.test/acs' }], sp_certificate: 'not a certificate' }, 'sp_certificate'],
  [{ entity_id: 'https://x.test/sp', acs_urls: [{ url: 'https://x.test/acs' }], name_id_format: 'kerberos' }, 'name_id_format'],
  [
    { entity_id: 'https://x.test/sp', acs_urls: [{ url: 'https://x.test/acs' }], sign_response: false, sign_assertion: false },
    'sign_assertion',
  ],
  // Encrypting needs a certificate to encrypt to.
  [{ entity_id: 'https://x.test/sp', acs_urls: [{ url: 'https://x.test/acs' }], encrypt_assertion: true }, 'encrypt_assertion'],
  [{ metadata_url: 'http://x.test/metadata' }, 'metadata_url'],
  [{ metadata_url: 'https://127.0.0.1/metadata' }, 'metadata_url'],
  [{ metadata_xml: '<md:EntityDescriptor/>', entity_id: 'https://x.test/sp' }, 'entity_id'],
])('400 validation_error naming the field: %j', async (fields, path) => {
  const res = await post({ name: 'Bad', ...fields });
  expect(res.status).toBe(400);
  expect(res.body.error).toBe('validation_error');
  expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
});

test('the guard: oauth_clients:read to read, oauth_clients:write to change; 401 without a token', async () => {
  const plain = (await makeSignedInUser(t, [])).bearer;
  expect((await request(t.app).get('/api/admin/saml-apps')).status).toBe(401);
  expect((await request(t.app).get('/api/admin/saml-apps').set('Authorization', plain)).status).toBe(403);
  expect((await post({ name: 'x', entity_id: 'https://y.test/sp', acs_urls: [{ url: 'https://y.test/acs' }] }, plain)).status).toBe(403);
});

test('the OpenAPI document lists the SAML routes', async () => {
  const doc = (await request(t.app).get('/api/openapi.json')).body;
  expect(Object.keys(doc.paths['/api/admin/saml-apps'])).toEqual(expect.arrayContaining(['get', 'post']));
  expect(Object.keys(doc.paths['/api/admin/saml-apps/{appId}'])).toEqual(expect.arrayContaining(['get', 'put', 'delete']));
  expect(doc.paths['/saml/metadata']).toBeDefined();
  expect(Object.keys(doc.paths['/saml/sso'])).toEqual(expect.arrayContaining(['get', 'post']));
  expect(Object.keys(doc.paths['/saml/slo'])).toEqual(expect.arrayContaining(['get', 'post']));
});
