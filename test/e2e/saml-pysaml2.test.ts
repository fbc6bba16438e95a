import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { createSelfSignedCertificate } from '../../src/lib/saml-certificate';
import { DEBIAN_PYTHON } from '../helpers/ensure-authlib';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { readPostForm } from '../helpers/saml';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Interop (CONTRACT §19): Debian's python3-pysaml2 (with xmlsec1), unchanged, as the service provider. It creates the
 * AuthnRequests and LogoutRequests (signed and unsigned, HTTP-Redirect and HTTP-POST), its metadata registers the
 * app, and its own code validates every Response and LogoutResponse our IdP sends (signatures with the certificate
 * from /saml/metadata, InResponseTo, Destination, Recipient, Audience, validity window). The browser part is played
 * here: the person signs in through the normal /login form.
 */
const SCRIPT = path.join(__dirname, '../interop/pysaml2_sp.py');
let t: TestApp;
let workdir: string;
const SIGNED = { base: 'http://127.0.0.1:9/signed', sign: true, slo_binding: 'redirect' };
const PLAIN = { base: 'http://127.0.0.1:9/plain', sign: false, slo_binding: 'post' };
const ENCRYPTED = { base: 'http://127.0.0.1:9/encrypted', sign: true, slo_binding: 'redirect', encrypted: true };

function sp(op: string, args: Record<string, unknown>): Record<string, unknown> & { url: string } {
  try {
    return JSON.parse(
      execFileSync(DEBIAN_PYTHON, [SCRIPT, workdir, op, JSON.stringify(args)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
    );
  } catch (err) {
    throw new Error(`pysaml2 ${op} failed: ${String((err as { stderr?: string }).stderr).slice(-1500)}`, { cause: err });
  }
}
const localPath = (url: string) => {
  const u = new URL(url);
  expect(u.origin).toBe(t.config.baseUrl);
  return u.pathname + u.search;
};

beforeAll(async () => {
  t = await createTestApp();
  workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'pysaml2-'));
  const key = createSelfSignedCertificate('pysaml2 sp', new Date());
  fs.writeFileSync(path.join(workdir, 'sp.key'), key.privateKeyPem);
  fs.writeFileSync(path.join(workdir, 'sp.crt'), key.certificatePem);
  fs.writeFileSync(path.join(workdir, 'idp.xml'), (await request(t.app).get('/saml/metadata')).text);
  const admin = (await makeSignedInUser(t, ['admin'])).bearer;
  // Both apps are registered from pysaml2's own metadata (entity id, ACS, SLO, certificate, AuthnRequestsSigned).
  for (const [name, conf] of [
    ['pysaml2 signed', SIGNED],
    ['pysaml2 plain', PLAIN],
  ] as const) {
    const metadata = sp('metadata', conf).xml as string;
    const res = await request(t.app).post('/api/admin/saml-apps').set('Authorization', admin).send({ name, metadata_xml: metadata });
    expect(res.status).toBe(201);
    expect(res.body.app.entity_id).toBe(`${conf.base}/metadata`);
    expect(res.body.app.want_authn_requests_signed).toBe(conf.sign);
    expect(res.body.app.sp_certificate).toContain('BEGIN CERTIFICATE');
  }
  // The third asks for encrypted assertions; its metadata publishes the encryption key (its signing key here).
  const encrypted = await request(t.app)
    .post('/api/admin/saml-apps')
    .set('Authorization', admin)
    .send({ name: 'pysaml2 encrypted', metadata_xml: sp('metadata', ENCRYPTED).xml, encrypt_assertion: true });
  expect(encrypted.status).toBe(201);
  expect(encrypted.body.app).toMatchObject({ encrypt_assertion: true, sp_encryption_certificate: null });
}, 60_000);
afterAll(async () => {
  await t?.close();
  if (workdir) fs.rmSync(workdir, { recursive: true, force: true });
});

/** The browser: from our SSO URL through /login (the normal form) to the auto-POST page; returns the form. */
async function throughSignIn(agent: TestAgent, first: request.Test, user: { email: string; password: string }) {
  const start = await first;
  expect(start.status).toBe(303);
  const cont = await agent.get(localPath(start.headers.location));
  expect(cont.status).toBe(303);
  const login = new URL(cont.headers.location);
  expect(login.pathname).toBe('/login');
  const returnTo = login.searchParams.get('return_to')!;
  const csrf = await csrfFrom(agent, localPath(cont.headers.location));
  const signedIn = await agent.post('/login').type('form').send({ email: user.email, password: user.password, return_to: returnTo, csrf });
  expect(signedIn.status).toBe(303);
  expect(signedIn.headers.location).toBe(returnTo);
  const page = await agent.get(localPath(returnTo));
  expect(page.status).toBe(200);
  expect(page.headers['content-security-policy']).toContain("script-src 'self'");
  expect(page.text).toContain('<script src="/static/saml-post.js" defer>');
  return readPostForm(page.text);
}

describe.each([
  ['HTTP-Redirect, signed requests, SLO over HTTP-Redirect', 'redirect', SIGNED],
  ['HTTP-POST, unsigned requests, SLO over HTTP-POST', 'post', PLAIN],
] as const)('pysaml2 SP: %s', (_name, binding, conf) => {
  test('SP-initiated sign-in through /login; pysaml2 accepts the Response; SLO ends the session and pysaml2 accepts the LogoutResponse', async () => {
    const user = await makeUser(t, { firstName: 'Ada', lastName: 'Lovelace', roles: ['admin'] });
    const agent = request.agent(t.app);
    const authn = sp('authn', { ...conf, binding, relay_state: 'rs-42' });
    const first =
      binding === 'redirect'
        ? agent.get(localPath(authn.url))
        : agent.post(localPath(authn.url)).type('form').send({ SAMLRequest: authn.SAMLRequest, RelayState: authn.RelayState });
    const form = await throughSignIn(agent, first, user);
    expect(form.action).toBe(`${conf.base}/acs`);
    expect(form.relayState).toBe('rs-42');

    const seen = sp('response', { ...conf, SAMLResponse: form.message, request_id: authn.id });
    expect(seen.name_id).toBe(user.email);
    expect(seen.name_id_format).toBe('urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress');
    expect(seen.in_response_to).toBe(authn.id);
    expect(seen.issuer).toBe(`${t.config.oidcIssuer}/saml/metadata`);
    expect(seen.audience).toEqual([`${conf.base}/metadata`]);
    const attributes = seen.attributes as Record<string, string[]>;
    expect(attributes['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress']).toEqual([user.email]);
    expect(attributes['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname']).toEqual(['Ada']);
    expect(attributes['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname']).toEqual(['Lovelace']);
    expect(attributes['http://schemas.microsoft.com/ws/2008/06/identity/claims/role']).toEqual(['admin']);
    const sessionIndex = seen.session_index as string;
    expect(sessionIndex).toMatch(/^_[0-9a-f]{40}$/);
    await t.ctx.events.idle?.();
    expect(await t.db('audit_events').where({ type: 'saml.sso.succeeded', subject_id: user.id })).toHaveLength(1);

    // The SSO session is live: the account page answers.
    expect((await agent.get('/api/auth/me')).status).toBe(200);

    // Single logout from the SP, by SessionIndex: a cross-site request carries no cookies.
    const logout = sp('logout', {
      ...conf,
      binding: conf.slo_binding,
      name_id: user.email,
      session_index: sessionIndex,
      relay_state: 'bye',
    });
    const sloRes =
      conf.slo_binding === 'redirect'
        ? await request(t.app).get(localPath(logout.url))
        : await request(t.app)
            .post(localPath(logout.url))
            .type('form')
            .send({ SAMLRequest: logout.SAMLRequest, RelayState: logout.RelayState });
    let answer: Record<string, unknown>;
    if (conf.slo_binding === 'redirect') {
      expect(sloRes.status).toBe(303);
      expect(sloRes.headers.location.startsWith(`${conf.base}/slo?SAMLResponse=`)).toBe(true);
      expect(new URL(sloRes.headers.location).searchParams.get('RelayState')).toBe('bye');
      answer = sp('logout_response', { ...conf, binding: 'redirect', url: sloRes.headers.location });
    } else {
      expect(sloRes.status).toBe(200);
      const sloForm = readPostForm(sloRes.text);
      expect(sloForm.action).toBe(`${conf.base}/slo`);
      expect(sloForm.relayState).toBe('bye');
      answer = sp('logout_response', { ...conf, binding: 'post', SAMLResponse: sloForm.message });
    }
    expect(answer.status).toBe('urn:oasis:names:tc:SAML:2.0:status:Success');
    expect(answer.in_response_to).toBe(logout.id);
    // The SSO session ended: the browser's cookies no longer sign anyone in.
    expect((await agent.get('/api/auth/me')).status).toBe(401);
    await t.ctx.events.idle?.();
    const slo = await t.db('audit_events').where({ type: 'saml.slo' }).orderBy('id', 'desc').first();
    expect(slo.detail).toMatchObject({ sessions_ended: 1 });
  }, 60_000);
});

test('encrypt_assertion: the assertion travels only encrypted (AES-256-GCM, RSA-OAEP), pysaml2 decrypts and validates it', async () => {
  const user = await makeUser(t, { firstName: 'Ada', lastName: 'Lovelace' });
  const agent = request.agent(t.app);
  const authn = sp('authn', { ...ENCRYPTED, binding: 'redirect', relay_state: 'enc' });
  const form = await throughSignIn(agent, agent.get(localPath(authn.url)), user);
  const xml = Buffer.from(form.message, 'base64').toString('utf8');
  expect(xml).toContain('<saml:EncryptedAssertion xmlns:saml=');
  expect(xml).toContain('Algorithm="http://www.w3.org/2009/xmlenc11#aes256-gcm"');
  expect(xml).toContain('Algorithm="http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"');
  expect(xml).not.toContain('<saml:Assertion');
  expect(xml).not.toContain(user.email);
  expect(xml).not.toContain('Lovelace');

  const seen = sp('response', { ...ENCRYPTED, SAMLResponse: form.message, request_id: authn.id });
  expect(seen.name_id).toBe(user.email);
  expect(seen.in_response_to).toBe(authn.id);
  expect(seen.audience).toEqual([`${ENCRYPTED.base}/metadata`]);
  expect((seen.attributes as Record<string, string[]>)['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname']).toEqual([
    'Lovelace',
  ]);
}, 60_000);

test('IdP-initiated (GET /saml/sso?app=<id> for a signed-in person): pysaml2 accepts the unsolicited Response', async () => {
  const user = await makeUser(t);
  const app = await t
    .db('saml_apps')
    .where({ entity_id: `${PLAIN.base}/metadata` })
    .first();
  const agent = request.agent(t.app);
  // Not signed in: to /login, and back to the same URL.
  const start = await agent.get(`/saml/sso?app=${app.id}`);
  expect(start.status).toBe(303);
  const returnTo = new URL(start.headers.location).searchParams.get('return_to')!;
  expect(returnTo).toBe(`${t.config.baseUrl}/saml/sso?app=${app.id}`);
  const csrf = await csrfFrom(agent, localPath(start.headers.location));
  await agent.post('/login').type('form').send({ email: user.email, password: user.password, return_to: returnTo, csrf });
  const form = readPostForm((await agent.get(localPath(returnTo))).text);
  expect(form.action).toBe(`${PLAIN.base}/acs`);
  const seen = sp('response', { ...PLAIN, SAMLResponse: form.message });
  expect(seen.name_id).toBe(user.email);
  expect(seen.in_response_to).toBeNull();
}, 60_000);

test('a pysaml2 request replayed: the second use of the request ID is refused (page + audit event)', async () => {
  const authn = sp('authn', { ...SIGNED, binding: 'redirect' });
  expect((await request(t.app).get(localPath(authn.url))).status).toBe(303);
  const again = await request(t.app).get(localPath(authn.url));
  expect(again.status).toBe(400);
  expect(again.type).toBe('text/html');
  expect(again.text).toContain('this request ID was already used');
});

test('a request of the signing SP with its signature stripped is refused', async () => {
  const authn = sp('authn', { ...SIGNED, binding: 'redirect' });
  const url = new URL(authn.url);
  url.searchParams.delete('Signature');
  url.searchParams.delete('SigAlg');
  const res = await request(t.app).get(url.pathname + url.search);
  expect(res.status).toBe(400);
  expect(res.text).toContain('this application must sign its requests');
});
