import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { createSelfSignedCertificate } from '../../src/lib/saml-certificate';
import { PHP, SIMPLESAMLPHP_WWW } from '../helpers/ensure-simplesamlphp';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { csrfFrom, freePort } from '../helpers/oauth';
import { readPostForm } from '../helpers/saml';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Interop (CONTRACT §19) with a second service provider nobody here wrote: Debian's SimpleSAMLphp, unchanged, under
 * PHP's built-in web server. Its saml:SP signs its AuthnRequest and LogoutRequest (HTTP-Redirect, RSA-SHA256), reads
 * our IdP from /saml/metadata, is registered here from its own metadata, and its own code validates our Response (the
 * signatures, Destination, InResponseTo, audience, validity) and LogoutResponse. The browser is played here: a cookie
 * jar towards SimpleSAMLphp, a supertest agent towards us, and the person signs in through the normal /login form.
 */
const CONFIG_DIR = path.join(__dirname, '../interop/simplesamlphp');
let t: TestApp;
let workdir: string;
let base: string;
let php: ChildProcess | undefined;
let appId: string;
let spMetadata: string;
let admin: string;
/** What each Response carried: an EncryptedAssertion, the address in clear. */
const posted: Array<{ encrypted: boolean; clear: boolean }> = [];
let phpLog = '';

/** The browser's side towards SimpleSAMLphp: its cookies, and requests that never follow redirects. */
class Browser {
  private cookies = new Map<string, string>();
  async go(url: string, init: { method?: string; form?: Record<string, string> } = {}) {
    expect(url.startsWith(base)).toBe(true);
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    return { status: res.status, location: res.headers.get('location') ?? '', text: await res.text() };
  }
}

const localPath = (url: string) => {
  const u = new URL(url);
  expect(u.origin).toBe(t.config.baseUrl);
  return u.pathname + u.search;
};

async function startSimpleSamlPhp(encrypted: boolean) {
  const port = await freePort();
  base = `http://127.0.0.1:${port}/`;
  php = spawn(PHP, ['-S', `127.0.0.1:${port}`, '-t', SIMPLESAMLPHP_WWW, path.join(CONFIG_DIR, 'router.php')], {
    env: {
      PATH: process.env.PATH,
      SIMPLESAMLPHP_CONFIG_DIR: CONFIG_DIR,
      SSP_DIR: workdir,
      SSP_BASE: base,
      SSP_IDP: `${t.config.oidcIssuer}/saml/metadata`,
      SSP_SALT: randomBytes(16).toString('hex'),
      SSP_ENCRYPTED: encrypted ? '1' : '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  php.stderr!.on('data', (d: Buffer) => (phpLog = (phpLog + d.toString()).slice(-4000)));
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`${base}app.php?state=1`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`php -S did not start: ${phpLog}`);
}

beforeAll(async () => {
  t = await createTestApp();
  workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'simplesamlphp-'));
  for (const d of ['cert', 'log', 'data', 'tmp']) fs.mkdirSync(path.join(workdir, d));
  const key = createSelfSignedCertificate('simplesamlphp sp', new Date());
  fs.writeFileSync(path.join(workdir, 'cert/sp.key'), key.privateKeyPem);
  fs.writeFileSync(path.join(workdir, 'cert/sp.crt'), key.certificatePem);
  fs.writeFileSync(path.join(workdir, 'idp.xml'), (await request(t.app).get('/saml/metadata')).text);
  await startSimpleSamlPhp(false);
  // Registered from SimpleSAMLphp's own metadata (entity id, ACS, SLO, certificate, AuthnRequestsSigned).
  const metadata = await (await fetch(`${base}module.php/saml/sp/metadata.php/default-sp`)).text();
  spMetadata = metadata;
  admin = (await makeSignedInUser(t, ['admin'])).bearer;
  const res = await request(t.app)
    .post('/api/admin/saml-apps')
    .set('Authorization', admin)
    .send({ name: 'SimpleSAMLphp', metadata_xml: metadata, attributes: { email: 'mail', given_name: 'givenName', family_name: 'sn' } });
  expect(res.status).toBe(201);
  expect(res.body.app).toMatchObject({
    entity_id: `${base}sp`,
    acs_urls: [{ url: `${base}module.php/saml/sp/saml2-acs.php/default-sp`, index: 0, default: true }],
    slo_url: `${base}module.php/saml/sp/saml2-logout.php/default-sp`,
    slo_binding: 'HTTP-Redirect',
    want_authn_requests_signed: true,
  });
  appId = res.body.app.id as string;
}, 60_000);

afterAll(async () => {
  if (php && php.exitCode === null) {
    php.kill('SIGTERM');
    await new Promise((r) => php!.once('exit', r));
  }
  await t?.close();
  if (workdir) fs.rmSync(workdir, { recursive: true, force: true });
});

/** SP-initiated: the application, SimpleSAMLphp's redirect to us, /login, and our auto-POST form back to its ACS. */
async function signInThroughSp(browser: Browser, agent: TestAgent, user: { email: string; password: string }) {
  const app = await browser.go(`${base}app.php`);
  expect(app.status).toBe(302);
  const sso = new URL(app.location);
  expect(`${sso.origin}${sso.pathname}`).toBe(`${t.config.baseUrl}/saml/sso`);
  expect(sso.searchParams.get('Signature')).toBeTruthy();
  expect(sso.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');

  const start = await agent.get(localPath(app.location));
  expect(start.status).toBe(303);
  const cont = await agent.get(localPath(start.headers.location));
  expect(cont.status).toBe(303);
  const login = new URL(cont.headers.location);
  expect(login.pathname).toBe('/login');
  const returnTo = login.searchParams.get('return_to')!;
  const csrf = await csrfFrom(agent, localPath(cont.headers.location));
  const signedIn = await agent.post('/login').type('form').send({ email: user.email, password: user.password, return_to: returnTo, csrf });
  expect(signedIn.headers.location).toBe(returnTo);
  const form = readPostForm((await agent.get(localPath(returnTo))).text);
  expect(form.action).toBe(`${base}module.php/saml/sp/saml2-acs.php/default-sp`);
  const xml = Buffer.from(form.message, 'base64').toString('utf8');
  posted.push({ encrypted: xml.includes('<saml:EncryptedAssertion '), clear: xml.includes(user.email) });

  // The person's browser posts the form to SimpleSAMLphp, which validates it and returns to the application.
  const acs = await browser.go(form.action, { method: 'POST', form: { SAMLResponse: form.message, RelayState: form.relayState ?? '' } });
  if (acs.status !== 302 && acs.status !== 303)
    throw new Error(`SimpleSAMLphp refused the Response (${acs.status}): ${acs.text.slice(0, 3000)}`);
  expect(acs.location).toBe(`${base}app.php`);
  const seen = await browser.go(acs.location);
  expect(seen.status).toBe(200);
  return JSON.parse(seen.text) as {
    authenticated: boolean;
    idp: string;
    name_id: string;
    name_id_format: string;
    session_index: string;
    attributes: Record<string, string[]>;
  };
}

test('SP-initiated sign-in over HTTP-Redirect: SimpleSAMLphp accepts our Response and releases the mapped attributes', async () => {
  const user = await makeUser(t, { firstName: 'Grace', lastName: 'Hopper', roles: ['admin'] });
  const seen = await signInThroughSp(new Browser(), request.agent(t.app), user);
  expect(seen).toMatchObject({
    authenticated: true,
    idp: `${t.config.oidcIssuer}/saml/metadata`,
    name_id: user.email,
    name_id_format: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  });
  expect(seen.session_index).toMatch(/^_[0-9a-f]{40}$/);
  expect(seen.attributes.mail).toEqual([user.email]);
  expect(seen.attributes.givenName).toEqual(['Grace']);
  expect(seen.attributes.sn).toEqual(['Hopper']);
  expect(seen.attributes['http://schemas.microsoft.com/ws/2008/06/identity/claims/role']).toEqual(['admin']);
  await t.ctx.events.idle?.();
  expect(await t.db('audit_events').where({ type: 'saml.sso.succeeded', subject_id: user.id })).toHaveLength(1);
}, 60_000);

test('single logout started at SimpleSAMLphp: our session ends and SimpleSAMLphp accepts the LogoutResponse', async () => {
  const user = await makeUser(t);
  const browser = new Browser();
  const agent = request.agent(t.app);
  await signInThroughSp(browser, agent, user);
  expect((await agent.get('/api/auth/me')).status).toBe(200);

  const start = await browser.go(`${base}app.php?logout=1`);
  expect(start.status).toBe(302);
  const slo = new URL(start.location);
  expect(`${slo.origin}${slo.pathname}`).toBe(`${t.config.baseUrl}/saml/slo`);
  expect(slo.searchParams.get('Signature')).toBeTruthy();
  // The browser carries our cookie on this top-level navigation.
  const answer = await agent.get(localPath(start.location));
  expect(answer.status).toBe(303);
  expect(answer.headers.location.startsWith(`${base}module.php/saml/sp/saml2-logout.php/default-sp?SAMLResponse=`)).toBe(true);
  expect((await agent.get('/api/auth/me')).status).toBe(401);

  const back = await browser.go(answer.headers.location);
  if (back.status !== 302 && back.status !== 303)
    throw new Error(`SimpleSAMLphp refused the LogoutResponse (${back.status}): ${back.text.slice(0, 3000)}`);
  expect(back.location).toBe(`${base}app.php?state=1`);
  expect(JSON.parse((await browser.go(back.location)).text)).toEqual({ authenticated: false });
  await t.ctx.events.idle?.();
  const event = await t.db('audit_events').where({ type: 'saml.slo' }).orderBy('id', 'desc').first();
  expect(event.detail).toMatchObject({ sessions_ended: 1 });
}, 60_000);

test('a Response tampered on the way is refused by SimpleSAMLphp itself', async () => {
  const user = await makeUser(t);
  const browser = new Browser();
  const agent = request.agent(t.app);
  const app = await browser.go(`${base}app.php`);
  const start = await agent.get(localPath(app.location));
  const cont = await agent.get(localPath(start.headers.location));
  const returnTo = new URL(cont.headers.location).searchParams.get('return_to')!;
  const csrf = await csrfFrom(agent, localPath(cont.headers.location));
  await agent.post('/login').type('form').send({ email: user.email, password: user.password, return_to: returnTo, csrf });
  const form = readPostForm((await agent.get(localPath(returnTo))).text);
  const xml = Buffer.from(form.message, 'base64').toString('utf8');
  expect(xml).toContain(user.email);
  const forged = Buffer.from(xml.split(user.email).join('mallory@example.test')).toString('base64');
  const acs = await browser.go(form.action, { method: 'POST', form: { SAMLResponse: forged, RelayState: form.relayState ?? '' } });
  // No way into the application: SimpleSAMLphp shows its error page instead of redirecting.
  expect(acs.status).toBe(200);
  expect(acs.location).toBe('');
  expect(acs.text).toContain('Reference validation failed');
  expect(JSON.parse((await browser.go(`${base}app.php?state=1`)).text)).toEqual({ authenticated: false });
}, 60_000);

test('encrypt_assertion: SimpleSAMLphp decrypts the assertion (AES-256-GCM, RSA-OAEP) with its key and accepts it', async () => {
  const changed = await request(t.app)
    .put(`/api/admin/saml-apps/${appId}`)
    .set('Authorization', admin)
    .send({
      name: 'SimpleSAMLphp',
      metadata_xml: spMetadata,
      attributes: { email: 'mail', given_name: 'givenName', family_name: 'sn' },
      encrypt_assertion: true,
    });
  expect(changed.status).toBe(200);
  expect(changed.body.app.encrypt_assertion).toBe(true);
  const user = await makeUser(t, { firstName: 'Katherine', lastName: 'Johnson' });
  const seen = await signInThroughSp(new Browser(), request.agent(t.app), user);
  expect(seen).toMatchObject({ authenticated: true, name_id: user.email });
  expect(seen.attributes.sn).toEqual(['Johnson']);
  expect(posted.at(-1)).toEqual({ encrypted: true, clear: false });
  expect(posted[0]).toEqual({ encrypted: false, clear: true });
}, 60_000);
