import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { startWebhookWorker, type WebhookWorker } from '../../src/services/webhooks/queue';
import { APACHE, APACHE_MODULES, MOD_AUTH_OPENIDC } from '../helpers/ensure-apache-openidc';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { csrfFrom, createListeningTestApp, freePort } from '../helpers/oauth';
import { signInAndApprove } from '../helpers/oidc';
import { RpBrowser } from '../helpers/rp-browser';
import type { TestApp } from '../helpers/test-app';

/**
 * Interop (issue 34, OpenID Connect Back-Channel Logout 1.0) with a relying party nobody here wrote: Debian's Apache
 * with Debian's mod_auth_openidc, unchanged, as a foreground process with its own configuration in a temporary
 * directory, on a free port. It protects a page; the person signs in to it through this server (mod_auth_openidc reads
 * our discovery document, exchanges the code and checks the id_token itself). mod_auth_openidc's back-channel logout
 * endpoint is its redirect URI with `?logout=backchannel`: registered as the client's backchannel_logout_uri, it
 * receives our logout token when the session here ends, verifies it with our JWKS and deletes its own session, so the
 * same Apache session cookie no longer opens the page.
 */
let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let worker: WebhookWorker;
let admin: string;
let apache: ChildProcess | undefined;
let workdir: string;
let origin: string;
let clientId: string;
let errorLog = '';

const PAGE = '/protected/page.html';
const SECRET_TEXT = 'the page behind mod_auth_openidc';

function apacheConfig(port: number, secret: string): string {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  return `
ServerRoot "${workdir}"
ServerName 127.0.0.1
Listen 127.0.0.1:${port}
PidFile "${workdir}/httpd.pid"
DefaultRuntimeDir "${workdir}/run"
Mutex file:${workdir}/run default
ErrorLog "${workdir}/error.log"
LogLevel warn auth_openidc:info
${isRoot ? 'User www-data\nGroup www-data' : ''}
LoadModule mpm_event_module ${APACHE_MODULES}/mod_mpm_event.so
LoadModule authn_core_module ${APACHE_MODULES}/mod_authn_core.so
LoadModule authz_core_module ${APACHE_MODULES}/mod_authz_core.so
LoadModule authz_user_module ${APACHE_MODULES}/mod_authz_user.so
LoadModule mime_module ${APACHE_MODULES}/mod_mime.so
LoadModule auth_openidc_module ${MOD_AUTH_OPENIDC}
TypesConfig /etc/mime.types
DocumentRoot "${workdir}/htdocs"

OIDCProviderMetadataURL ${baseUrl}/.well-known/openid-configuration
OIDCClientID ${clientId}
OIDCClientSecret ${secret}
OIDCRedirectURI http://127.0.0.1:${port}/protected/redirect_uri
OIDCCryptoPassphrase ${randomBytes(24).toString('hex')}
OIDCScope "openid profile email"
OIDCPKCEMethod S256
OIDCRemoteUserClaim sub
OIDCSessionType server-cache
OIDCCacheType shm

<Location /protected>
  AuthType openid-connect
  Require valid-user
</Location>
`;
}

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
  admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
  worker = await startWebhookWorker(t.ctx, { connectionString: t.databaseUrl, retryDelaysSeconds: [0.2, 0.2], pollIntervalMs: 100 });
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  const created = await request(t.app)
    .post('/api/admin/oauth-clients')
    .set('Authorization', admin)
    .send({
      name: 'Apache',
      redirect_uris: [`${origin}/protected/redirect_uri`],
      backchannel_logout_uri: `${origin}/protected/redirect_uri?logout=backchannel`,
      backchannel_logout_session_required: true,
    });
  expect(created.status).toBe(201);
  clientId = created.body.client.client_id;

  workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'mod-auth-openidc-'));
  fs.chmodSync(workdir, 0o755);
  fs.mkdirSync(path.join(workdir, 'run'));
  fs.mkdirSync(path.join(workdir, 'htdocs/protected'), { recursive: true });
  fs.writeFileSync(path.join(workdir, `htdocs${PAGE}`), `<!doctype html><title>Protected</title><p>${SECRET_TEXT}</p>\n`);
  fs.writeFileSync(path.join(workdir, 'httpd.conf'), apacheConfig(port, created.body.client_secret));
  // -X: one process in the foreground (no service, no children); the test stops it.
  apache = spawn(APACHE, ['-X', '-f', path.join(workdir, 'httpd.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  apache.stderr!.on('data', (d: Buffer) => (errorLog = (errorLog + d.toString()).slice(-4000)));
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`${origin}/`).then(
      () => true,
      () => false,
    );
    if (up) return;
    if (apache.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`apache2 did not start: ${errorLog}${readLog()}`);
}, 60_000);

afterAll(async () => {
  if (apache && apache.exitCode === null) {
    apache.kill('SIGTERM');
    await new Promise((r) => apache!.once('exit', r));
  }
  await worker?.stop();
  await stop?.();
  if (workdir) fs.rmSync(workdir, { recursive: true, force: true });
});

const readLog = () => {
  try {
    return fs.readFileSync(path.join(workdir, 'error.log'), 'utf8').slice(-4000);
  } catch {
    return '';
  }
};

/** The person opens the protected page and signs in through this server; returns both browsers. */
async function signInThroughApache(user: { email: string; password: string }) {
  const apacheBrowser = new RpBrowser(origin);
  const first = await apacheBrowser.go(PAGE);
  if (first.status !== 302) throw new Error(`Apache answered ${first.status}: ${first.text.slice(0, 500)} ${readLog()}`);
  const authorizationUrl = new URL(first.location);
  expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${baseUrl}/api/oauth/authorize`);
  expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
  const { callback, browser } = await signInAndApprove(baseUrl, authorizationUrl, user);
  expect(`${callback.origin}${callback.pathname}`).toBe(`${origin}/protected/redirect_uri`);
  // mod_auth_openidc exchanges the code, validates the id_token and starts its own session.
  const done = await apacheBrowser.go(callback.pathname + callback.search);
  if (done.status !== 302) throw new Error(`mod_auth_openidc's callback answered ${done.status}: ${done.text.slice(0, 500)} ${readLog()}`);
  expect(new URL(done.location, origin).pathname).toBe(PAGE);
  return { apacheBrowser, browser };
}

async function waitForDelivery(userId: string) {
  for (let i = 0; i < 300; i++) {
    const [row] = await t.db('backchannel_logout_deliveries').where({ client_id: clientId, user_id: userId });
    if (row && row.status !== 'pending') return row as Record<string, unknown>;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no delivery to Apache finished: ${readLog()}`);
}

test('signing out here ends the Apache session: the same cookie no longer opens the page', async () => {
  const user = await makeUser(t);
  const { apacheBrowser, browser } = await signInThroughApache(user);
  const page = await apacheBrowser.go(PAGE);
  expect(page.status).toBe(200);
  expect(page.text).toContain(SECRET_TEXT);

  const csrf = await csrfFrom(browser, '/login');
  expect((await browser.post('/logout').type('form').send({ csrf })).status).toBe(303);
  const delivery = await waitForDelivery(user.id);
  expect(delivery).toMatchObject({ status: 'delivered', attempts: 1 });
  expect(Number(delivery.last_response_status)).toBeGreaterThanOrEqual(200);
  expect(Number(delivery.last_response_status)).toBeLessThan(300);

  // mod_auth_openidc deleted its session: the page sends the person to sign in again.
  const after = await apacheBrowser.go(PAGE);
  expect(after.status).toBe(302);
  expect(after.location.startsWith(`${baseUrl}/api/oauth/authorize?`)).toBe(true);
  expect(after.text).not.toContain(SECRET_TEXT);
});

test("an administrator's revocation ends that person's Apache session only", async () => {
  const [victim, bystander] = [await makeUser(t), await makeUser(t)];
  const ended = await signInThroughApache(victim);
  const kept = await signInThroughApache(bystander);
  const [session] = await t.db('sessions').where({ user_id: victim.id }).whereNull('client_id').whereNull('revoked_at');
  expect((await request(t.app).delete(`/api/users/${victim.id}/sessions/${session.id}`).set('Authorization', admin)).status).toBe(204);
  expect(await waitForDelivery(victim.id)).toMatchObject({ status: 'delivered' });
  expect((await ended.apacheBrowser.go(PAGE)).status).toBe(302);
  const still = await kept.apacheBrowser.go(PAGE);
  expect(still.status).toBe(200);
  expect(still.text).toContain(SECRET_TEXT);
});

test("mod_auth_openidc's endpoint refuses a logout token this server did not sign", async () => {
  const forged = [
    Buffer.from(JSON.stringify({ alg: 'none', typ: 'logout+jwt' })).toString('base64url'),
    Buffer.from(JSON.stringify({ iss: baseUrl, aud: clientId, sid: 'x', iat: Math.floor(Date.now() / 1000) })).toString('base64url'),
    '',
  ].join('.');
  const res = await fetch(`${origin}/protected/redirect_uri?logout=backchannel`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ logout_token: forged }).toString(),
  });
  expect(res.status).toBeGreaterThanOrEqual(400);
});
