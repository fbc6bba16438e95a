import { deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import request from 'supertest';
import { createSelfSignedCertificate } from '../../src/lib/saml-certificate';
import { rotateSamlKey } from '../../src/services/saml/saml-keys.service';
import { makeSignedInUser } from '../helpers/factories';
import {
  authnRequestXml,
  createSamlApp,
  decodeResponse,
  logoutRequestXml,
  makeTestSp,
  readPostForm,
  redirectQuery,
  signatureValid,
  signRequest,
  type TestSp,
} from '../helpers/saml';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §19 from the SP's side, with hand-made requests: every refusal (an HTML page and a saml.sso.failed event,
 * nothing sent to an ACS), signature wrapping, the Response's content, IsPassive/ForceAuthn, metadata and key rotation,
 * and a fuzz of the endpoints. Interop with a real SP is test/e2e/saml-pysaml2.test.ts.
 */
let t: TestApp;
let admin: string;
let user: Awaited<ReturnType<typeof makeSignedInUser>>;
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';

beforeAll(async () => {
  t = await createTestApp();
  admin = (await makeSignedInUser(t, ['admin'])).bearer;
  user = await makeSignedInUser(t, []);
});
afterAll(async () => t?.close());

const cookie = () => `accessToken=${user.accessToken}`;
const localPath = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

async function lastFailure() {
  await t.ctx.events.idle?.();
  return t.db('audit_events').where({ type: 'saml.sso.failed' }).orderBy('id', 'desc').first();
}

async function expectRefused(res: request.Response, reason: string) {
  expect(res.status).toBe(400);
  expect(res.type).toBe('text/html');
  expect(res.text).toContain('This sign-in link is not valid');
  expect(res.text).toContain(reason);
  expect(res.headers.location).toBeUndefined();
  expect((await lastFailure()).detail.reason).toBe(reason);
}

/** A signed-in browser through SSO: the auto-POST form. */
async function ssoForm(first: request.Response) {
  expect(first.status).toBe(303);
  const page = await request(t.app).get(localPath(first.headers.location)).set('Cookie', cookie());
  expect(page.status).toBe(200);
  return readPostForm(page.text);
}

describe('a successful SP-initiated sign-in (HTTP-Redirect)', () => {
  let sp: TestSp;
  beforeAll(async () => {
    sp = makeTestSp();
    await createSamlApp(t, admin, sp);
  });

  test('the Response: both signatures verify with the metadata certificate, one assertion, every §19 field', async () => {
    const { id, xml } = authnRequestXml(t, sp);
    const form = await ssoForm(await request(t.app).get(`/saml/sso?${redirectQuery(xml, 'relay ✓ 1')}`));
    expect(form.action).toBe(sp.acsUrl);
    expect(form.relayState).toBe('relay ✓ 1');
    const { xml: responseXml, doc } = decodeResponse(form.message);
    const response = doc.documentElement;
    expect(response.getAttribute('InResponseTo')).toBe(id);
    expect(response.getAttribute('Destination')).toBe(sp.acsUrl);
    const assertions = doc.getElementsByTagNameNS(ASSERTION, 'Assertion');
    expect(assertions).toHaveLength(1);
    const assertion = assertions[0]!;
    const metadata = (await request(t.app).get('/saml/metadata')).text;
    const certBody = /<ds:X509Certificate>([^<]+)</.exec(metadata)![1]!;
    const certificatePem = `-----BEGIN CERTIFICATE-----\n${certBody}\n-----END CERTIFICATE-----\n`;
    expect(signatureValid(responseXml, response, certificatePem)).toBe(true);
    expect(signatureValid(responseXml, assertion, certificatePem)).toBe(true);
    const one = (name: string, ns = ASSERTION) => doc.getElementsByTagNameNS(ns, name)[0]!;
    expect(one('Audience').textContent).toBe(sp.entityId);
    expect(one('NameID').textContent).toBe(user.user.email);
    expect(one('SubjectConfirmationData').getAttribute('Recipient')).toBe(sp.acsUrl);
    expect(one('SubjectConfirmationData').getAttribute('InResponseTo')).toBe(id);
    const conditions = one('Conditions');
    const issued = Date.parse(response.getAttribute('IssueInstant')!);
    expect(Math.abs(issued - t.clock.now().getTime())).toBeLessThan(5000);
    // 5 minutes either side of the issue instant, on the assertion and its subject confirmation.
    expect(Date.parse(conditions.getAttribute('NotBefore')!)).toBe(issued - 300_000);
    expect(Date.parse(conditions.getAttribute('NotOnOrAfter')!)).toBe(issued + 300_000);
    expect(Date.parse(one('SubjectConfirmationData').getAttribute('NotOnOrAfter')!)).toBe(issued + 300_000);
    const authn = one('AuthnStatement');
    expect(authn.getAttribute('SessionIndex')).toMatch(/^_[0-9a-f]{40}$/);
    expect(authn.getAttribute('AuthnInstant')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(one('StatusCode', PROTOCOL).getAttribute('Value')).toBe('urn:oasis:names:tc:SAML:2.0:status:Success');
    // The session index is recorded against the SSO session: the app is among the user's SAML sessions.
    const row = await t
      .db('saml_sessions')
      .where({ session_index: authn.getAttribute('SessionIndex') })
      .first();
    expect(row.user_id).toBe(user.user.id);
  });

  test('the ACS may be chosen by a registered index; the continuation is single use', async () => {
    const sp2 = makeTestSp();
    await createSamlApp(t, admin, sp2, {
      acs_urls: [
        { url: sp2.acsUrl, index: 0, default: true },
        { url: `${sp2.acsUrl}/second`, index: 7 },
      ],
    });
    const { xml } = authnRequestXml(t, sp2, { acsIndex: 7 });
    const first = await request(t.app).get(`/saml/sso?${redirectQuery(xml)}`);
    const form = await ssoForm(first);
    expect(form.action).toBe(`${sp2.acsUrl}/second`);
    const again = await request(t.app).get(localPath(first.headers.location)).set('Cookie', cookie());
    await expectRefused(again, 'the sign-in request is unknown, expired or already answered');
  });

  test('HTTP-POST binding with an enveloped signature checked against the registered certificate', async () => {
    const signing = makeTestSp();
    await createSamlApp(t, admin, signing, { sp_certificate: signing.key.certificatePem, want_authn_requests_signed: true });
    const { id, xml } = authnRequestXml(t, signing);
    const signed = signRequest(xml, 'AuthnRequest', id, signing.key);
    const res = await request(t.app)
      .post('/saml/sso')
      .type('form')
      .send({ SAMLRequest: Buffer.from(signed).toString('base64'), RelayState: 'p' });
    const form = await ssoForm(res);
    expect(form.action).toBe(signing.acsUrl);
    expect(form.relayState).toBe('p');
  });
});

describe('§19 refusals: an HTML error page and saml.sso.failed, never a redirect to an ACS', () => {
  let sp: TestSp;
  let signing: TestSp;
  beforeAll(async () => {
    sp = makeTestSp();
    await createSamlApp(t, admin, sp);
    signing = makeTestSp();
    await createSamlApp(t, admin, signing, { sp_certificate: signing.key.certificatePem, want_authn_requests_signed: true });
  });
  const get = (xml: string, relay?: string, key?: TestSp['key']) => request(t.app).get(`/saml/sso?${redirectQuery(xml, relay, key)}`);
  const post = (xml: string) =>
    request(t.app)
      .post('/saml/sso')
      .type('form')
      .send({ SAMLRequest: Buffer.from(xml).toString('base64') });

  test('an unknown issuer', async () => {
    await expectRefused(
      await get(authnRequestXml(t, sp, { issuer: 'https://stranger.test/sp' }).xml),
      'the Issuer is not a registered SAML application',
    );
  });
  test('a disabled app', async () => {
    const off = makeTestSp();
    await createSamlApp(t, admin, off, { enabled: false });
    await expectRefused(await get(authnRequestXml(t, off).xml), 'this SAML application is disabled');
  });
  test('an ACS URL that is not registered (even on the same host), or an unknown index', async () => {
    await expectRefused(
      await get(authnRequestXml(t, sp, { acsUrl: `${sp.acsUrl}/evil` }).xml),
      'the AssertionConsumerServiceURL is not registered for this application',
    );
    await expectRefused(
      await get(authnRequestXml(t, sp, { acsIndex: 9 }).xml),
      'the AssertionConsumerServiceIndex is not registered for this application',
    );
  });
  test('RelayState longer than 80 bytes (81 bytes; 80 pass)', async () => {
    await expectRefused(await get(authnRequestXml(t, sp).xml, 'x'.repeat(81)), 'RelayState is longer than 80 bytes');
    expect((await get(authnRequestXml(t, sp).xml, 'é'.repeat(40))).status).toBe(303);
  });
  test('a request ID used twice (also across bindings)', async () => {
    const { xml } = authnRequestXml(t, sp);
    expect((await get(xml)).status).toBe(303);
    await expectRefused(await get(xml), 'this request ID was already used');
    await expectRefused(await post(xml), 'this request ID was already used');
  });
  test('concurrent copies of one request: exactly one is stored', async () => {
    const { xml } = authnRequestXml(t, sp);
    const results = await Promise.all(Array.from({ length: 6 }, () => get(xml)));
    expect(results.filter((r) => r.status === 303)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400)).toHaveLength(5);
  });
  test('an IssueInstant outside ±5 minutes, a wrong Destination, a wrong version', async () => {
    await expectRefused(
      await get(authnRequestXml(t, sp, { issueInstant: new Date(t.clock.now().getTime() - 301_000) }).xml),
      'the message was issued too long ago or in the future',
    );
    await expectRefused(
      await get(authnRequestXml(t, sp, { destination: 'https://other-idp.test/sso' }).xml),
      'the message is addressed to another Destination',
    );
    await expectRefused(await get(authnRequestXml(t, sp).xml.replace('Version="2.0"', 'Version="1.1"')), 'the message is not SAML 2.0');
  });
  test('an app that wants signed requests: unsigned, signed with another key, or tampered after signing', async () => {
    const { xml } = authnRequestXml(t, signing);
    await expectRefused(await get(xml), 'this application must sign its requests');
    const stranger = createSelfSignedCertificate('stranger', new Date());
    await expectRefused(await get(xml, undefined, stranger), 'the signature is not valid');
    const good = redirectQuery(authnRequestXml(t, signing).xml, 'r', signing.key);
    const tampered = good.replace(/RelayState=r/, 'RelayState=s');
    await expectRefused(await request(t.app).get(`/saml/sso?${tampered}`), 'the signature is not valid');
    const sha1 = good.replace(/SigAlg=[^&]+/, `SigAlg=${encodeURIComponent('http://www.w3.org/2000/09/xmldsig#rsa-sha1')}`);
    await expectRefused(await request(t.app).get(`/saml/sso?${sha1}`), 'the signature must use RSA-SHA256');
  });

  describe('signature wrapping (HTTP-POST, enveloped signatures)', () => {
    test('a changed attribute after signing breaks the digest', async () => {
      const { id, xml } = authnRequestXml(t, signing);
      const signed = signRequest(xml, 'AuthnRequest', id, signing.key).replace(`ForceAuthn`, 'X');
      const changed = signed.replace('ProtocolBinding=', 'IsPassive="true" ProtocolBinding=');
      await expectRefused(await post(changed), 'the signature is not valid');
    });
    test('the signed request wrapped inside an attacker-made one (XSW: another root, signature deeper)', async () => {
      const { id, xml } = authnRequestXml(t, signing);
      const signed = signRequest(xml, 'AuthnRequest', id, signing.key);
      const evil = authnRequestXml(t, signing, { acsUrl: signing.acsUrl }).xml.replace(
        '</samlp:AuthnRequest>',
        `<samlp:Extensions>${signed}</samlp:Extensions></samlp:AuthnRequest>`,
      );
      await expectRefused(await post(evil), 'the message must carry exactly one signature, on its root');
    });
    test('the signature moved to an attacker-made root whose ID it references is refused (reference ≠ root)', async () => {
      const { id, xml } = authnRequestXml(t, signing);
      const signed = signRequest(xml, 'AuthnRequest', id, signing.key);
      const signature = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(signed)![0];
      const evil = authnRequestXml(t, signing, { id: '_evil' }).xml.replace('</saml:Issuer>', `</saml:Issuer>${signature}`);
      await expectRefused(await post(evil), 'the signature does not cover the message');
    });
    test('a second copy of the ID (duplicate ID) or two signatures', async () => {
      const { id, xml } = authnRequestXml(t, signing);
      const signed = signRequest(xml, 'AuthnRequest', id, signing.key);
      const twice = signed.replace(
        '</samlp:AuthnRequest>',
        `<samlp:Extensions>${/<ds:Signature[\s\S]*<\/ds:Signature>/.exec(signed)![0]}</samlp:Extensions></samlp:AuthnRequest>`,
      );
      await expectRefused(await post(twice), 'the message must carry exactly one signature, on its root');
    });
  });

  test('XML safety: a DTD, an entity, a processing instruction, two roots, not XML, not DEFLATE', async () => {
    const { xml } = authnRequestXml(t, sp);
    await expectRefused(await post(`<!DOCTYPE x [<!ENTITY e "boom">]>${xml}`), 'the message contains a document type declaration');
    await expectRefused(await post(xml.replace('</saml:Issuer>', '&e;</saml:Issuer>')), 'the message contains an entity reference');
    await expectRefused(await post(`<?xml-stylesheet href="x"?>${xml}`), 'the message contains a processing instruction');
    await expectRefused(await post(`${xml}${xml}`), 'the message is not well-formed XML');
    await expectRefused(await post('not xml at all'), 'the message is not well-formed XML');
    await expectRefused(await request(t.app).get('/saml/sso?SAMLRequest=AAAA'), 'the message is not DEFLATE-compressed or is too large');
    const bomb = deflateRawSync(Buffer.alloc(5_000_000, 'a')).toString('base64');
    await expectRefused(
      await request(t.app).get('/saml/sso').query({ SAMLRequest: bomb }),
      'the message is not DEFLATE-compressed or is too large',
    );
  });
});

describe('IsPassive and ForceAuthn', () => {
  let sp: TestSp;
  beforeAll(async () => {
    sp = makeTestSp();
    await createSamlApp(t, admin, sp);
  });
  test('IsPassive and not signed in: a signed Response with status NoPassive, no assertion', async () => {
    const { id, xml } = authnRequestXml(t, sp, { isPassive: true });
    const first = await request(t.app).get(`/saml/sso?${redirectQuery(xml, 'np')}`);
    const page = await request(t.app).get(localPath(first.headers.location));
    const form = readPostForm(page.text);
    expect(form.action).toBe(sp.acsUrl);
    expect(form.relayState).toBe('np');
    const { xml: responseXml, doc } = decodeResponse(form.message);
    expect(doc.getElementsByTagNameNS(PROTOCOL, 'StatusCode')[0]!.getAttribute('Value')).toBe(
      'urn:oasis:names:tc:SAML:2.0:status:NoPassive',
    );
    expect(doc.getElementsByTagNameNS(ASSERTION, 'Assertion')).toHaveLength(0);
    expect(doc.documentElement.getAttribute('InResponseTo')).toBe(id);
    expect(doc.getElementsByTagNameNS(DS, 'Signature')).toHaveLength(1);
    const cert = (await t.db('saml_signing_keys').whereNull('retired_at').first()).certificate_pem;
    expect(signatureValid(responseXml, doc.documentElement, cert)).toBe(true);
  });
  test('not signed in, not passive: to /login and back to the continuation', async () => {
    const first = await request(t.app).get(`/saml/sso?${redirectQuery(authnRequestXml(t, sp).xml)}`);
    const page = await request(t.app).get(localPath(first.headers.location));
    expect(page.status).toBe(303);
    const login = new URL(page.headers.location);
    expect(login.pathname).toBe('/login');
    expect(login.searchParams.get('return_to')).toBe(first.headers.location);
  });
  test('ForceAuthn with an older sign-in: to /login even though signed in', async () => {
    t.clock.advance(2);
    const first = await request(t.app).get(`/saml/sso?${redirectQuery(authnRequestXml(t, sp, { forceAuthn: true }).xml)}`);
    const page = await request(t.app).get(localPath(first.headers.location)).set('Cookie', cookie());
    expect(page.status).toBe(303);
    expect(new URL(page.headers.location).pathname).toBe('/login');
  });
});

describe('single logout', () => {
  test('a LogoutRequest by SessionIndex ends the SSO session; a signed LogoutResponse goes to the SLO URL', async () => {
    const sp = makeTestSp();
    await createSamlApp(t, admin, sp);
    const person = await makeSignedInUser(t, []);
    const first = await request(t.app).get(`/saml/sso?${redirectQuery(authnRequestXml(t, sp).xml)}`);
    const page = await request(t.app).get(localPath(first.headers.location)).set('Cookie', `accessToken=${person.accessToken}`);
    const { doc } = decodeResponse(readPostForm(page.text).message);
    const sessionIndex = doc.getElementsByTagNameNS(ASSERTION, 'AuthnStatement')[0]!.getAttribute('SessionIndex')!;
    expect((await request(t.app).get('/api/auth/me').set('Authorization', person.bearer)).status).toBe(200);
    const res = await request(t.app).get(`/saml/slo?${redirectQuery(logoutRequestXml(t, sp, person.user.email, sessionIndex), 'out')}`);
    expect(res.status).toBe(303);
    const back = new URL(res.headers.location);
    expect(back.origin + back.pathname).toBe(sp.sloUrl);
    expect(back.searchParams.get('RelayState')).toBe('out');
    expect(back.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    expect(back.searchParams.get('Signature')).toBeTruthy();
    expect((await request(t.app).get('/api/auth/me').set('Authorization', person.bearer)).status).toBe(401);
    // Replaying it ends nothing more.
    const again = await request(t.app).get(`/saml/slo?${redirectQuery(logoutRequestXml(t, sp, person.user.email, sessionIndex))}`);
    expect(again.status).toBe(303);
    await t.ctx.events.idle?.();
    const events = await t.db('audit_events').where({ type: 'saml.slo' }).orderBy('id', 'desc').limit(2);
    expect(events.map((e) => e.detail.sessions_ended)).toEqual([0, 1]);
  });
  test('a LogoutRequest whose NameID does not match the session ends nothing (the SAML session stays live)', async () => {
    const sp = makeTestSp();
    await createSamlApp(t, admin, sp);
    const person = await makeSignedInUser(t, []);
    const first = await request(t.app).get(`/saml/sso?${redirectQuery(authnRequestXml(t, sp).xml)}`);
    const page = await request(t.app).get(localPath(first.headers.location)).set('Cookie', `accessToken=${person.accessToken}`);
    const { doc } = decodeResponse(readPostForm(page.text).message);
    const sessionIndex = doc.getElementsByTagNameNS(ASSERTION, 'AuthnStatement')[0]!.getAttribute('SessionIndex')!;
    const wrong = await request(t.app).get(
      `/saml/slo?${redirectQuery(logoutRequestXml(t, sp, 'someone-else@example.test', sessionIndex))}`,
    );
    expect(wrong.status).toBe(303);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', person.bearer)).status).toBe(200);
    const row = await t.db('saml_sessions').where({ session_index: sessionIndex }).first();
    expect(row.ended_at).toBeNull();
    // The matching NameID still ends it afterwards.
    const right = await request(t.app).get(`/saml/slo?${redirectQuery(logoutRequestXml(t, sp, person.user.email, sessionIndex))}`);
    expect(right.status).toBe(303);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', person.bearer)).status).toBe(401);
    await t.ctx.events.idle?.();
    const events = await t.db('audit_events').where({ type: 'saml.slo' }).orderBy('id', 'desc').limit(2);
    expect(events.map((e) => e.detail.sessions_ended)).toEqual([1, 0]);
  });
  test('a LogoutRequest from an unknown issuer is an error page and an audit event', async () => {
    const stranger = makeTestSp();
    const res = await request(t.app).get(`/saml/slo?${redirectQuery(logoutRequestXml(t, stranger, 'x@example.test', '_abc'))}`);
    expect(res.status).toBe(400);
    expect(res.text).toContain('the Issuer is not a registered SAML application');
  });
});

describe('IdP-initiated', () => {
  test('GET /saml/sso?app=<id>: the default ACS, no InResponseTo; an unknown app is an error page', async () => {
    const sp = makeTestSp();
    const app = await createSamlApp(t, admin, sp);
    const page = await request(t.app).get(`/saml/sso?app=${app.id}`).set('Cookie', cookie());
    const form = readPostForm(page.text);
    expect(form.action).toBe(sp.acsUrl);
    const { doc } = decodeResponse(form.message);
    expect(doc.documentElement.hasAttribute('InResponseTo')).toBe(false);
    const res = await request(t.app).get('/saml/sso?app=not-an-app').set('Cookie', cookie());
    expect(res.status).toBe(400);
  });

  test('the app is among the person’s connected apps (API and /account, with the IdP-initiated link); a disabled one is not', async () => {
    const person = await makeSignedInUser(t, []);
    const sp = makeTestSp();
    const app = await createSamlApp(t, admin, sp, { name: 'Payroll <HR>' });
    expect((await request(t.app).get('/api/auth/apps').set('Authorization', person.bearer)).body.saml_apps).toEqual([]);
    await request(t.app).get(`/saml/sso?app=${app.id}`).set('Cookie', `accessToken=${person.accessToken}`);
    const apps = await request(t.app).get('/api/auth/apps').set('Authorization', person.bearer);
    expect(apps.body.saml_apps).toEqual([
      { id: app.id, name: 'Payroll <HR>', last_sign_in_at: expect.any(String), sign_in_url: `${t.config.baseUrl}/saml/sso?app=${app.id}` },
    ]);
    const page = await request(t.app).get('/account').set('Cookie', `accessToken=${person.accessToken}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<a href="/saml/sso?app=${app.id}" aria-label="Open Payroll &lt;HR>">Open</a>`);
    const de = await request(t.app).get('/account?ui_locales=de').set('Cookie', `accessToken=${person.accessToken}`);
    expect(de.text).toContain('Anwendungen, bei denen Sie sich mit SAML angemeldet haben');
    await request(t.app)
      .put(`/api/admin/saml-apps/${app.id}`)
      .set('Authorization', admin)
      .send({ name: 'Payroll', entity_id: sp.entityId, acs_urls: [{ url: sp.acsUrl }], enabled: false });
    expect((await request(t.app).get('/api/auth/apps').set('Authorization', person.bearer)).body.saml_apps).toEqual([]);
  });
});

describe('metadata and key rotation', () => {
  test('entityID under OIDC_ISSUER, SSO for both bindings, SLO; rotation publishes both certificates and signs with the new one', async () => {
    const res = await request(t.app).get('/saml/metadata');
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/samlmetadata+xml');
    expect(res.text).toContain(`entityID="${t.config.oidcIssuer}/saml/metadata"`);
    expect(res.text).toContain(
      `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${t.config.baseUrl}/saml/sso"/>`,
    );
    expect(res.text).toContain(
      `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${t.config.baseUrl}/saml/sso"/>`,
    );
    expect(res.text).toContain(
      `<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${t.config.baseUrl}/saml/slo"/>`,
    );
    expect(res.text.match(/<ds:X509Certificate>/g)).toHaveLength(1);
    const key = await t.db('saml_signing_keys').whereNull('retired_at').first();
    expect(key.private_key_sealed).toMatch(/^v1\./);
    expect(key.private_key_sealed).not.toContain('PRIVATE KEY');

    const { id } = await rotateSamlKey(t.ctx);
    const after = await request(t.app).get('/saml/metadata');
    expect(after.text.match(/<ds:X509Certificate>/g)).toHaveLength(2);
    const current = await t.db('saml_signing_keys').where({ id }).first();
    const sp = makeTestSp();
    await createSamlApp(t, admin, sp);
    const form = await ssoForm(await request(t.app).get(`/saml/sso?${redirectQuery(authnRequestXml(t, sp).xml)}`));
    const { xml, doc } = decodeResponse(form.message);
    expect(signatureValid(xml, doc.documentElement, current.certificate_pem)).toBe(true);
    expect(signatureValid(xml, doc.documentElement, key.certificate_pem)).toBe(false);
  });
});

describe('fuzzing the SAML endpoints', () => {
  test('random and mutated input never answers 5xx; refusals are HTML pages', async () => {
    const sp = makeTestSp();
    await createSamlApp(t, admin, sp);
    const { xml } = authnRequestXml(t, sp);
    const mutate = fc
      .tuple(fc.nat({ max: xml.length }), fc.nat({ max: 40 }), fc.string({ maxLength: 20 }))
      .map(([at, cut, insert]) => xml.slice(0, at) + insert + xml.slice(at + cut));
    const payload = fc.oneof(
      mutate.map((s) => Buffer.from(s).toString('base64')),
      mutate.map((s) => deflateRawSync(Buffer.from(s)).toString('base64')),
      fc.string({ maxLength: 200 }),
      fc.base64String({ maxLength: 400 }),
    );
    await fc.assert(
      fc.asyncProperty(
        payload,
        fc.constantFrom('/saml/sso', '/saml/slo'),
        fc.boolean(),
        fc.option(fc.string({ maxLength: 100 })),
        async (message, path, asPost, relay) => {
          const res = asPost
            ? await request(t.app)
                .post(path)
                .type('form')
                .send({ SAMLRequest: message, ...(relay !== null ? { RelayState: relay } : {}) })
            : await request(t.app)
                .get(path)
                .query({ SAMLRequest: message, ...(relay !== null ? { RelayState: relay } : {}) });
          expect(res.status).toBeLessThan(500);
          if (res.status === 400) expect(res.type).toBe('text/html');
        },
      ),
      { numRuns: 150 },
    );
    expect((await t.db('audit_events').where({ type: 'saml.sso.failed' }).count('* as n'))[0]!.n).not.toBe('0');
  }, 120_000);
});
