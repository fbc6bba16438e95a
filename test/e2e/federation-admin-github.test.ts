import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { makeSignedInUser, makeUser, uniqueEmail } from '../helpers/factories';
import { makeUserWithPermissions } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/** As the page renderer escapes an attribute value. */
const escapeHtml = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
import {
  addProvider,
  startAndAuthorize,
  startFakeGitHub,
  startUpstreamOidc,
  type FakeGitHub,
  type UpstreamOidc,
} from '../helpers/upstream';

/**
 * CONTRACT §16: the admin API of identity providers (write-only sealed secrets, validation of an OpenID provider when
 * saved, presets) and the github type against a GitHub-shaped server (OAuth 2.0 + user and emails API).
 */
let t: TestApp;
let upstream: UpstreamOidc;
let github: FakeGitHub;
let admin: string;
const logLines: string[] = [];
let wrongIssuer: Server;
let wrongIssuerUrl: string;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  t = await createTestApp({ env: { IDP_ALLOW_PRIVATE: 'true' }, logger: pino({ level: 'trace' }, sink) });
  upstream = await startUpstreamOidc([`${t.config.baseUrl}/api/auth/idp/corp/callback`]);
  github = await startFakeGitHub();
  admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
  // A discovery document that names another issuer than the one it is served for.
  const app = express();
  app.get('/.well-known/openid-configuration', (_req, res) =>
    res.json({ issuer: 'https://elsewhere.example', authorization_endpoint: 'https://elsewhere.example/auth' }),
  );
  wrongIssuer = http.createServer(app);
  await new Promise<void>((resolve) => wrongIssuer.listen(0, '127.0.0.1', () => resolve()));
  wrongIssuerUrl = `http://127.0.0.1:${(wrongIssuer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  wrongIssuer?.closeAllConnections();
  await new Promise<void>((resolve) => (wrongIssuer ? wrongIssuer.close(() => resolve()) : resolve()));
  await upstream?.stop();
  await github?.stop();
  await t?.close();
});

const api = () => request(t.app);
const oidcBody = (over: Record<string, unknown> = {}) => ({
  slug: 'corp',
  name: 'Corp SSO',
  type: 'oidc',
  issuer: upstream.issuer,
  client_id: upstream.clientId,
  client_secret: upstream.clientSecret,
  ...over,
});

describe('/api/admin/identity-providers', () => {
  let id: string;

  test('POST creates an OpenID provider: 201, the secret write-only and sealed at rest', async () => {
    const res = await api().post('/api/admin/identity-providers').set('Authorization', admin).send(oidcBody());
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.provider).toEqual({
      id: expect.any(String),
      slug: 'corp',
      name: 'Corp SSO',
      type: 'oidc',
      issuer: upstream.issuer,
      base_url: null,
      api_base_url: null,
      client_id: upstream.clientId,
      has_client_secret: true,
      scopes: 'openid profile email',
      enabled: true,
      trust_email: false,
      allow_signup: true,
      callback_url: `${t.config.baseUrl}/api/auth/idp/corp/callback`,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(res.body)).not.toContain(upstream.clientSecret);
    id = res.body.provider.id;
    const row = await t.db('identity_providers').where({ id }).first();
    expect(row.client_secret_sealed).toMatch(/^v1\./);
    expect(row.client_secret_sealed).not.toContain(upstream.clientSecret);
    expect(t.ctx.sealer.open(row.client_secret_sealed, `idp-client-secret:${id}`)).toBe(upstream.clientSecret);
  });

  test('GET list and detail never carry the secret', async () => {
    const list = await api().get('/api/admin/identity-providers').set('Authorization', admin);
    expect(list.status).toBe(200);
    expect(list.body.providers.map((p: { slug: string }) => p.slug)).toContain('corp');
    const detail = await api().get(`/api/admin/identity-providers/${id}`).set('Authorization', admin);
    expect(detail.body.provider.has_client_secret).toBe(true);
    expect(JSON.stringify([list.body, detail.body])).not.toContain(upstream.clientSecret);
  });

  test('a duplicate slug is 409', async () => {
    const res = await api().post('/api/admin/identity-providers').set('Authorization', admin).send(oidcBody());
    expect(res.status).toBe(409);
  });

  test('PUT without client_secret keeps it; with one replaces it', async () => {
    const before = (await t.db('identity_providers').where({ id }).first()).client_secret_sealed;
    const renamed = await api().put(`/api/admin/identity-providers/${id}`).set('Authorization', admin).send({ name: 'Corporate' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.provider.name).toBe('Corporate');
    expect((await t.db('identity_providers').where({ id }).first()).client_secret_sealed).toBe(before);
    const replaced = await api()
      .put(`/api/admin/identity-providers/${id}`)
      .set('Authorization', admin)
      .send({ client_secret: 'new-secret' });
    expect(replaced.status).toBe(200);
    const row = await t.db('identity_providers').where({ id }).first();
    expect(t.ctx.sealer.open(row.client_secret_sealed, `idp-client-secret:${id}`)).toBe('new-secret');
    await api()
      .put(`/api/admin/identity-providers/${id}`)
      .set('Authorization', admin)
      .send({ client_secret: upstream.clientSecret, name: 'Corp SSO' });
  });

  test.each([
    ['no issuer for oidc', { issuer: undefined }, 'issuer', /needs its issuer/],
    ['an issuer that does not answer', { slug: 'down', issuer: 'http://127.0.0.1:9' }, 'issuer', /could not be fetched/],
    ['a slug with capitals', { slug: 'Corp' }, 'slug', /lower-case/],
    ['an unknown type', { type: 'saml' }, 'type', /oidc/],
    ['scopes without openid', { slug: 'noopenid', scopes: 'profile email' }, 'scopes', /openid/],
    ['base_url on an oidc provider', { slug: 'mixed', base_url: 'https://x.example' }, 'base_url', /github/],
    ['no client_secret', { slug: 'nosecret', client_secret: undefined }, 'client_secret', /required/],
  ])('400 validation_error with details: %s', async (_name, over, path, message) => {
    const res = await api().post('/api/admin/identity-providers').set('Authorization', admin).send(oidcBody(over));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    const detail = res.body.details.find((d: { path: string }) => d.path === path);
    expect(detail?.message).toMatch(message);
  });

  test('an issuer whose discovery document names another issuer: 400 saying so', async () => {
    const res = await api()
      .post('/api/admin/identity-providers')
      .set('Authorization', admin)
      .send(oidcBody({ slug: 'wrong', issuer: wrongIssuerUrl }));
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ path: 'issuer', message: expect.stringMatching(/names another issuer/) }]);
    expect(await t.db('identity_providers').where({ slug: 'wrong' }).first()).toBeUndefined();
  });

  test('presets: github fills the GitHub defaults; microsoft asks for the tenant issuer', async () => {
    const gh = await api()
      .post('/api/admin/identity-providers')
      .set('Authorization', admin)
      .send({ preset: 'github', slug: 'gh-preset', client_id: 'x', client_secret: 'y' });
    expect(gh.status).toBe(201);
    expect(gh.body.provider).toMatchObject({
      type: 'github',
      name: 'GitHub',
      base_url: 'https://github.com',
      api_base_url: 'https://api.github.com',
      scopes: 'read:user user:email',
    });
    const ms = await api()
      .post('/api/admin/identity-providers')
      .set('Authorization', admin)
      .send({ preset: 'microsoft', slug: 'ms', client_id: 'x', client_secret: 'y' });
    expect(ms.status).toBe(400);
    expect(ms.body.details[0].message).toContain('https://login.microsoftonline.com/{tenant id}/v2.0');
  });

  test('system:manage_identity_providers is required: role admin (system:manage_users) is refused (CONTRACT §23)', async () => {
    const id = (await api().get('/api/admin/identity-providers').set('Authorization', admin)).body.providers[0].id as string;
    for (const caller of [await makeSignedInUser(t), await makeSignedInUser(t, ['admin']), await makeSignedInUser(t, ['manager'])]) {
      expect((await api().get('/api/admin/identity-providers').set('Authorization', caller.bearer)).status).toBe(403);
      expect((await api().get(`/api/admin/identity-providers/${id}`).set('Authorization', caller.bearer)).status).toBe(403);
      const create = await api()
        .post('/api/admin/identity-providers')
        .set('Authorization', caller.bearer)
        .send(oidcBody({ slug: 'x', trust_email: true }));
      expect(create.status).toBe(403);
      expect(
        (await api().put(`/api/admin/identity-providers/${id}`).set('Authorization', caller.bearer).send({ trust_email: true })).status,
      ).toBe(403);
      expect((await api().delete(`/api/admin/identity-providers/${id}`).set('Authorization', caller.bearer)).status).toBe(403);
    }
    expect(await t.db('identity_providers').where({ slug: 'x' }).first()).toBeUndefined();
    expect((await api().get('/api/admin/identity-providers')).status).toBe(401);
    // The permission itself opens the door; the migration gave it to super_admin only.
    const holder = await makeUserWithPermissions(t, ['system:manage_identity_providers']);
    expect((await api().get('/api/admin/identity-providers').set('Authorization', holder.bearer)).status).toBe(200);
    const holders = await t
      .db('role_permissions as rp')
      .join('roles as r', 'r.id', 'rp.role_id')
      .where('rp.permission', 'system:manage_identity_providers')
      .whereIn('r.name', ['super_admin', 'admin', 'manager'])
      .pluck('r.name');
    expect(holders).toEqual(['super_admin']);
  });

  test('GET /api/auth/idp lists enabled providers for sign-in pages; a disabled one is gone', async () => {
    const res = await api().get('/api/auth/idp');
    expect(res.body.providers).toContainEqual({
      slug: 'corp',
      name: 'Corp SSO',
      type: 'oidc',
      start_url: `${t.config.baseUrl}/api/auth/idp/corp/start`,
    });
    const gh = (await api().get('/api/admin/identity-providers').set('Authorization', admin)).body.providers.find(
      (p: { slug: string }) => p.slug === 'gh-preset',
    );
    await api().put(`/api/admin/identity-providers/${gh.id}`).set('Authorization', admin).send({ enabled: false });
    expect((await api().get('/api/auth/idp')).body.providers.map((p: { slug: string }) => p.slug)).not.toContain('gh-preset');
    expect((await api().get('/api/auth/idp/gh-preset/start')).status).toBe(404);
  });

  test('/login shows "Continue with {name}" for enabled providers, keeping return_to', async () => {
    const page = await api().get(`/login?return_to=${encodeURIComponent(`${t.config.baseUrl}/account`)}`);
    expect(page.text).toContain('Continue with Corp SSO');
    expect(page.text).toContain(escapeHtml(`/api/auth/idp/corp/start?return_to=${encodeURIComponent(`${t.config.baseUrl}/account`)}`));
    expect(page.text).not.toContain('Continue with GitHub');
  });

  test('DELETE removes the provider and unlinks its identities (audited)', async () => {
    const created = await api()
      .post('/api/admin/identity-providers')
      .set('Authorization', admin)
      .send({ preset: 'github', slug: 'temp', client_id: 'x', client_secret: 'y' });
    const user = await makeUser(t);
    await t.db('user_identities').insert({
      id: '00000000-0000-4000-8000-000000000001',
      user_id: user.id,
      provider_id: created.body.provider.id,
      issuer: 'https://github.com',
      subject: '1',
    });
    expect((await api().delete(`/api/admin/identity-providers/${created.body.provider.id}`).set('Authorization', admin)).status).toBe(204);
    expect(await t.db('user_identities').where({ user_id: user.id })).toHaveLength(0);
    expect((await api().get(`/api/admin/identity-providers/${created.body.provider.id}`).set('Authorization', admin)).status).toBe(404);
    await t.ctx.events.idle?.();
    expect(await t.db('audit_events').where({ type: 'idp.provider.deleted' })).toHaveLength(1);
  });
});

describe('outbound policy: a provider on a private address needs idp_allow_private or idp_allowed_hosts', () => {
  test('without it, saving a provider on 127.0.0.1 is refused with the reason', async () => {
    const strict = await createTestApp();
    try {
      const bearer = (await makeSignedInUser(strict, ['super_admin'])).bearer;
      const res = await request(strict.app)
        .post('/api/admin/identity-providers')
        .set('Authorization', bearer)
        .send(oidcBody({ issuer: upstream.issuer.replace('http:', 'https:') }));
      expect(res.status).toBe(400);
      expect(res.body.details[0]).toMatchObject({
        path: 'issuer',
        message: expect.stringMatching(/does not resolve to an address this server may call.*idp_allowed_hosts.*idp_allow_private/),
      });
      const http = await request(strict.app).post('/api/admin/identity-providers').set('Authorization', bearer).send(oidcBody());
      // An issuer over http: the refusal names the setting that allows it (the local-development switch).
      expect(http.status).toBe(400);
      expect(http.body.details[0]).toMatchObject({
        path: 'issuer',
        message: expect.stringMatching(/https.*idp_allow_private.*IDP_ALLOW_PRIVATE=true.*local development/),
      });
    } finally {
      await strict.close();
    }
  });

  test('idp_allow_private is a runtime setting: turned on, the same provider is saved without a restart; off again, refused', async () => {
    const live = await createTestApp();
    try {
      const bearer = (await makeSignedInUser(live, ['super_admin'])).bearer;
      const settings = await request(live.app).get('/api/admin/settings').set('Authorization', bearer);
      for (const name of ['idp_allow_private', 'idp_allowed_hosts'])
        expect(settings.body.settings.find((s: { name: string }) => s.name === name)).toMatchObject({
          source: 'default',
          read_only: false,
          env_var: name.toUpperCase(),
          sensitive: true,
        });
      const turn = (value: boolean) =>
        request(live.app).patch('/api/admin/settings').set('Authorization', bearer).send({ idp_allow_private: value });
      expect((await turn(true)).status).toBe(200);
      const saved = await request(live.app)
        .post('/api/admin/identity-providers')
        .set('Authorization', bearer)
        .send(oidcBody({ slug: 'lab' }));
      expect(saved.status).toBe(201);
      expect((await turn(false)).status).toBe(200);
      const refused = await request(live.app)
        .post('/api/admin/identity-providers')
        .set('Authorization', bearer)
        .send(oidcBody({ slug: 'lab2' }));
      expect(refused.status).toBe(400);
      expect(refused.body.details[0]).toMatchObject({ path: 'issuer', message: expect.stringMatching(/https/) });
      // A host name list, normalised; a URL is refused naming the setting.
      const hosts = await request(live.app)
        .patch('/api/admin/settings')
        .set('Authorization', bearer)
        .send({ idp_allowed_hosts: ['ID.Internal.Example', '[::1]', '127.0.0.1'] });
      expect(hosts.status).toBe(200);
      expect(hosts.body.settings.find((s: { name: string }) => s.name === 'idp_allowed_hosts').value).toEqual([
        'id.internal.example',
        '::1',
        '127.0.0.1',
      ]);
      const bad = await request(live.app)
        .patch('/api/admin/settings')
        .set('Authorization', bearer)
        .send({ idp_allowed_hosts: ['https://id.internal.example/'] });
      expect(bad.status).toBe(400);
      expect(bad.body.details[0].path).toMatch(/^idp_allowed_hosts/);
    } finally {
      await live.close();
    }
  });

  test('IDP_ALLOW_PRIVATE pins the setting: read-only, and a PATCH naming it is refused with the variable', async () => {
    const res = await request(t.app).patch('/api/admin/settings').set('Authorization', admin).send({ idp_allow_private: false });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('IDP_ALLOW_PRIVATE');
    const got = await request(t.app).get('/api/admin/settings').set('Authorization', admin);
    expect(got.body.settings.find((s: { name: string }) => s.name === 'idp_allow_private')).toMatchObject({
      value: true,
      source: 'environment',
      read_only: true,
    });
  });
});

describe('github type (OAuth 2.0 + user and emails API)', () => {
  let ghId: string;
  beforeAll(async () => {
    ghId = (
      await addProvider(t, admin.replace('Bearer ', ''), {
        slug: 'github',
        type: 'github',
        name: 'GitHub Enterprise',
        base_url: github.baseUrl,
        api_base_url: github.apiBaseUrl,
        client_id: github.clientId,
        client_secret: github.clientSecret,
        trust_email: true,
      })
    ).id;
  });

  test('a new person: signed up with the verified primary email, subject = the numeric id', async () => {
    const email = uniqueEmail('octo');
    github.users.set('octocat', {
      id: 583231,
      login: 'octocat',
      name: 'Mona Lisa Octocat',
      emails: [
        { email: 'other@example.test', primary: false, verified: true },
        { email, primary: true, verified: true },
      ],
    });
    github.signInAs('octocat');
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'github');
    const res = await browser.get(callbackPath);
    expect(res.status).toBe(303);
    const me = await browser.get('/api/auth/me');
    expect(me.body.user).toMatchObject({ email, email_verified: true, name: 'Mona Lisa Octocat', amr: ['fed'] });
    const identity = await t.db('user_identities').where({ provider_id: ghId }).first();
    expect(identity.subject).toBe('583231');
  });

  test('an unverified primary email matching an account: prove the account first', async () => {
    const user = await makeUser(t);
    github.users.set('unverified', {
      id: 42,
      login: 'unverified',
      name: null,
      emails: [{ email: user.email, primary: true, verified: false }],
    });
    github.signInAs('unverified');
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'github');
    const res = await browser.get(callbackPath);
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^\/login\?/);
    expect((await browser.get('/api/auth/me')).status).toBe(401);
  });

  test('a token exchange the provider refuses signs nobody in', async () => {
    await api().put(`/api/admin/identity-providers/${ghId}`).set('Authorization', admin).send({ client_secret: 'wrong-secret' });
    github.users.set('someone', {
      id: 7,
      login: 'someone',
      name: 'Some One',
      emails: [{ email: uniqueEmail('gh'), primary: true, verified: true }],
    });
    github.signInAs('someone');
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'github');
    const res = await browser.get(callbackPath);
    expect(res.status).toBe(400);
    expect(res.text).toContain('could not be verified');
    expect((await browser.get('/api/auth/me')).status).toBe(401);
    await api().put(`/api/admin/identity-providers/${ghId}`).set('Authorization', admin).send({ client_secret: github.clientSecret });
  });

  test('no code, access token or client secret reaches the log', async () => {
    await t.ctx.events.idle?.();
    const log = logLines.join('');
    expect(log).toContain('identity provider answer rejected');
    expect(log).not.toMatch(/gho_[0-9a-f]{32}/);
    expect(log).not.toContain(github.clientSecret);
    expect(log).not.toContain(upstream.clientSecret);
    expect(log).not.toMatch(/[?&]code=/);
  });

  test('after base_url changes, the same numeric id at the new GitHub does not sign in as the old user (CONTRACT §23)', async () => {
    const old = await t.db('user_identities').where({ provider_id: ghId, subject: '583231' }).first();
    expect(old.issuer).toBe(github.baseUrl);
    const moved = await startFakeGitHub();
    try {
      const put = await api()
        .put(`/api/admin/identity-providers/${ghId}`)
        .set('Authorization', admin)
        .send({ base_url: moved.baseUrl, api_base_url: moved.apiBaseUrl, client_id: moved.clientId, client_secret: moved.clientSecret });
      expect(put.status).toBe(200);
      const email = uniqueEmail('moved');
      moved.users.set('impostor', {
        id: 583231,
        login: 'impostor',
        name: 'Not Octocat',
        emails: [{ email, primary: true, verified: true }],
      });
      moved.signInAs('impostor');
      const browser = request.agent(t.app);
      const { callbackPath } = await startAndAuthorize(browser, 'github');
      expect((await browser.get(callbackPath)).status).toBe(303);
      const me = (await browser.get('/api/auth/me')).body.user;
      expect(me.id).not.toBe(old.user_id);
      expect(me.email).toBe(email);
    } finally {
      await api().put(`/api/admin/identity-providers/${ghId}`).set('Authorization', admin).send({
        base_url: github.baseUrl,
        api_base_url: github.apiBaseUrl,
        client_id: github.clientId,
        client_secret: github.clientSecret,
      });
      await moved.stop();
    }
  });
});

describe('REGISTRATION=closed (CONTRACT §15)', () => {
  test('POST /api/auth/register answers 403 registration_closed and creates nothing', async () => {
    const closed = await createTestApp({ env: { REGISTRATION: 'closed' } });
    try {
      const email = uniqueEmail('closed');
      const res = await request(closed.app)
        .post('/api/auth/register')
        .send({ first_name: 'A', last_name: 'B', email, password: 'secret-password' });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('registration_closed');
      expect(await closed.db('users').where({ email }).first()).toBeUndefined();
    } finally {
      await closed.close();
    }
  });
});
