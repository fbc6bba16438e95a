import request from 'supertest';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { answerOnDevicePage, csrfOf, makeApiResource, makeAppClient } from '../helpers/apps';
import { enrolTotp, signInWithTotp } from '../helpers/mfa';
import { authorizeParams, authorizePath, basicAuth, locationParams, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §12 over HTTP: client types, grant types per client, RFC 8252 redirect URIs, API resources and RFC 8707
 * resource indicators, RFC 9068 access tokens (verified with jose against our JWKS), introspection and revocation of
 * them, client_credentials and the device grant with its /device page. Every refusal: an OAuth error, nothing issued.
 */
const jose = require('jose') as typeof import('jose');
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

let t: TestApp;
let admin: string;

beforeAll(async () => {
  t = await createTestApp();
  admin = (await makeSignedInUser(t, ['admin'])).bearer;
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);
const token = (form: Record<string, string>, auth?: string) => {
  const req = api().post('/api/oauth/token').type('form');
  if (auth) req.set('Authorization', auth);
  return req.send(form);
};

async function verifyAtJwt(accessToken: string, audience: string) {
  const jwks = jose.createLocalJWKSet((await api().get('/api/oauth/jwks')).body);
  return jose.jwtVerify(accessToken, jwks, { issuer: t.config.oidcIssuer, audience, typ: 'at+jwt' });
}
const introspect = async (tokenValue: string) => {
  const rs = await makeClient(t);
  return (
    await api()
      .post('/api/oauth/introspect')
      .set('Authorization', basicAuth(rs.clientId, rs.clientSecret))
      .type('form')
      .send({ token: tokenValue })
  ).body;
};
const sessionsCount = async () => Number((await t.db('sessions').count('* as n').first())!.n);

describe('client types in the admin API', () => {
  const create = (body: Record<string, unknown>) =>
    api()
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin)
      .send({ name: 'App', ...body });

  test('a public client: 201 without client_secret, token_endpoint_auth_method none, nothing stored as a secret', async () => {
    const res = await create({
      type: 'public',
      redirect_uris: ['http://127.0.0.1/callback', 'com.example.app:/oauth'],
      grant_types: ['authorization_code', 'refresh_token', DEVICE_GRANT],
    });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('client_secret');
    expect(res.body.client).toMatchObject({
      type: 'public',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token', DEVICE_GRANT],
      allowed_resources: [],
      redirect_uris: ['http://127.0.0.1/callback', 'com.example.app:/oauth'],
    });
    const row = await t.db('oauth_clients').where({ client_id: res.body.client.client_id }).first();
    expect(row.secret_hash).toBeNull();
    const rotate = await api().post(`/api/admin/oauth-clients/${res.body.client.client_id}/rotate-secret`).set('Authorization', admin);
    expect(rotate.status).toBe(400);
    expect(rotate.body.error).toBe('validation_error');
  });

  test('the migration made existing clients confidential with the two spec grants; the admin API shows them in the one client shape', async () => {
    const old = await makeClient(t);
    const row = await t.db('oauth_clients').where({ client_id: old.clientId }).first();
    expect(row.type).toBe('confidential');
    expect(row.grant_types).toEqual(['authorization_code', 'refresh_token']);
    const detail = await api().get(`/api/admin/oauth-clients/${old.clientId}`).set('Authorization', admin);
    expect(detail.body.client).toMatchObject({
      type: 'confidential',
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      allowed_resources: [],
    });
  });

  test.each([
    [
      'a public client asking for client_credentials',
      { type: 'public', redirect_uris: ['https://a.test/cb'], grant_types: ['client_credentials'] },
      'grant_types',
    ],
    ['a private-use scheme on a confidential client', { redirect_uris: ['com.example.app:/cb'] }, 'redirect_uris'],
    ['a private-use scheme without the reverse-domain dot', { type: 'public', redirect_uris: ['myapp:/cb'] }, 'redirect_uris'],
    ['the code grant without a redirect URI', { redirect_uris: [] }, 'redirect_uris'],
    ['an unknown grant type', { redirect_uris: ['https://a.test/cb'], grant_types: ['password'] }, 'grant_types'],
    ['refresh_token alone', { redirect_uris: ['https://a.test/cb'], grant_types: ['refresh_token'] }, 'grant_types'],
    ['an unregistered API', { redirect_uris: ['https://a.test/cb'], allowed_resources: ['https://nowhere.test/'] }, 'allowed_resources'],
    ['an unknown type', { type: 'secret', redirect_uris: ['https://a.test/cb'] }, 'type'],
  ])('%s -> 400 on %s', async (_name, body, path) => {
    const before = Number((await t.db('oauth_clients').count('* as n').first())!.n);
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(res.body.details.map((d: { path: string }) => d.path.split('.')[0])).toContain(path);
    expect(Number((await t.db('oauth_clients').count('* as n').first())!.n)).toBe(before);
  });

  test('a machine client: client_credentials without any redirect URI; grant_types and allowed_resources can change', async () => {
    const resource = await makeApiResource(t);
    const res = await create({ grant_types: ['client_credentials'], allowed_resources: [resource.identifier] });
    expect(res.status).toBe(201);
    expect(typeof res.body.client_secret).toBe('string');
    expect(res.body.client).toMatchObject({ type: 'confidential', token_endpoint_auth_method: 'client_secret_basic', redirect_uris: [] });
    const put = await api()
      .put(`/api/admin/oauth-clients/${res.body.client.client_id}`)
      .set('Authorization', admin)
      .send({ allowed_resources: [] });
    expect(put.status).toBe(200);
    expect(put.body.client.allowed_resources).toEqual([]);
  });
});

describe('/api/admin/api-resources', () => {
  test('create, list, read, update, delete; duplicate 409; bad input 400; permission guarded', async () => {
    const created = await api()
      .post('/api/admin/api-resources')
      .set('Authorization', admin)
      .send({ identifier: 'https://crud.api.test/', name: 'CRUD API', scopes: ['crud:read', 'crud:read'] });
    expect(created.status).toBe(201);
    expect(created.body.resource).toMatchObject({
      identifier: 'https://crud.api.test/',
      scopes: ['crud:read'],
      access_token_ttl_s: 3600,
      open_registration: false,
      dpop_bound_access_tokens: false,
    });
    const id = created.body.resource.id;
    const again = await api()
      .post('/api/admin/api-resources')
      .set('Authorization', admin)
      .send({ identifier: 'https://crud.api.test/', name: 'Twin' });
    expect(again.status).toBe(409);
    const list = await api().get('/api/admin/api-resources').set('Authorization', admin);
    expect(list.body.resources.map((r: { id: string }) => r.id)).toContain(id);
    const put = await api()
      .put(`/api/admin/api-resources/${id}`)
      .set('Authorization', admin)
      .send({ access_token_ttl_s: 600, scopes: ['crud:write'] });
    expect(put.body.resource).toMatchObject({ access_token_ttl_s: 600, scopes: ['crud:write'] });
    expect((await api().get(`/api/admin/api-resources/${id}`).set('Authorization', admin)).body.resource.name).toBe('CRUD API');
    expect((await api().delete(`/api/admin/api-resources/${id}`).set('Authorization', admin)).status).toBe(200);
    expect((await api().get(`/api/admin/api-resources/${id}`).set('Authorization', admin)).status).toBe(404);
    expect((await api().get('/api/admin/api-resources/not-a-uuid').set('Authorization', admin)).status).toBe(400);
    const plain = (await makeSignedInUser(t)).bearer;
    expect((await api().get('/api/admin/api-resources').set('Authorization', plain)).status).toBe(403);
  });

  test.each([
    ['a relative identifier', { identifier: '/api', name: 'X' }],
    ['a fragment', { identifier: 'https://x.test/#a', name: 'X' }],
    ['a scope with a space', { identifier: 'https://x.test/', name: 'X', scopes: ['a b'] }],
    ['openid as an API scope', { identifier: 'https://x.test/', name: 'X', scopes: ['openid'] }],
    ['a lifetime past the key rotation window', { identifier: 'https://x.test/', name: 'X', access_token_ttl_s: 7200 }],
  ])('%s -> 400', async (_name, body) => {
    const res = await api().post('/api/admin/api-resources').set('Authorization', admin).send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
  });
});

describe('public clients at the token, revocation and introspection endpoints', () => {
  test('code + PKCE with client_id alone; a secret sent by a public client is refused; refresh and revoke by client_id', async () => {
    const client = await makeAppClient(t, { type: 'public' });
    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier, redirectUri } = await obtainCode(agent, { ...client, clientSecret: '' });
    const withSecret = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      client_id: client.clientId,
      client_secret: 'x',
    });
    expect(withSecret.status).toBe(401);
    expect(withSecret.body.error).toBe('invalid_client');
    const res = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      client_id: client.clientId,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', scope: 'openid profile email' });
    expect(typeof res.body.id_token).toBe('string');
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: res.body.refresh_token, client_id: client.clientId });
    expect(refreshed.status).toBe(200);
    const revoked = await api()
      .post('/api/oauth/revoke')
      .type('form')
      .send({ token: refreshed.body.refresh_token, client_id: client.clientId });
    expect(revoked.status).toBe(200);
    expect(
      (await token({ grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, client_id: client.clientId })).body.error,
    ).toBe('invalid_grant');
    const intro = await api().post('/api/oauth/introspect').type('form').send({ token: res.body.access_token, client_id: client.clientId });
    expect(intro.status).toBe(401);
    expect(intro.body.error).toBe('invalid_client');
  });

  test('a confidential client without its secret: 401 invalid_client, nothing issued', async () => {
    const client = await makeClient(t);
    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier, redirectUri } = await obtainCode(agent, client);
    const before = await sessionsCount();
    const res = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      client_id: client.clientId,
    });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(await sessionsCount()).toBe(before);
  });

  test('grant types: unknown -> unsupported_grant_type; one the client is not registered for -> unauthorized_client', async () => {
    const client = await makeClient(t);
    const auth = basicAuth(client.clientId, client.clientSecret);
    expect((await token({ grant_type: 'password', username: 'a', password: 'b' }, auth)).body.error).toBe('unsupported_grant_type');
    const cc = await token({ grant_type: 'client_credentials' }, auth);
    expect(cc.status).toBe(400);
    expect(cc.body.error).toBe('unauthorized_client');
    const device = await api().post('/api/oauth/device_authorization').set('Authorization', auth).type('form').send({ scope: 'openid' });
    expect(device.body.error).toBe('unauthorized_client');
    const machine = await makeAppClient(t, { grantTypes: ['client_credentials'], redirectUris: [] });
    const code = await token(
      { grant_type: 'authorization_code', code: 'x', code_verifier: 'y', redirect_uri: 'https://app.test/callback' },
      basicAuth(machine.clientId, machine.clientSecret!),
    );
    expect(code.body.error).toBe('unauthorized_client');
    const spa = await makeAppClient(t, { type: 'public' });
    const publicCc = await token({ grant_type: 'client_credentials', client_id: spa.clientId });
    expect(publicCc.status).toBe(400);
    expect(publicCc.body).toEqual({ error: 'unauthorized_client', error_description: expect.any(String) });
    const deviceOnly = await makeAppClient(t, {
      type: 'public',
      grantTypes: [DEVICE_GRANT, 'refresh_token'],
      redirectUris: ['https://app.test/callback'],
    });
    const authorize = await api().get(authorizePath(authorizeParams(deviceOnly).params));
    expect(locationParams(authorize.headers.location).get('error')).toBe('unauthorized_client');
  });
});

describe('RFC 8252 redirect URIs', () => {
  test('a registered loopback URI matches any port with the same path; another path does not', async () => {
    const client = await makeAppClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
    const { agent } = await signIn(t, await makeUser(t));
    const redirect = 'http://127.0.0.1:53121/callback';
    const { code, verifier } = await obtainCode(agent, { ...client, clientSecret: '' }, { redirect_uri: redirect });
    const res = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirect,
      client_id: client.clientId,
    });
    expect(res.status).toBe(200);
    const other = await agent.get(authorizePath(authorizeParams(client, { redirect_uri: 'http://127.0.0.1:53121/other' }).params));
    expect(other.status).toBe(400);
    const userinfo = await agent.get(
      authorizePath(authorizeParams(client, { redirect_uri: 'http://user@127.0.0.1:53121/callback' }).params),
    );
    expect(userinfo.status).toBe(400);
  });

  test('a private-use scheme URI of a public client receives the code', async () => {
    const client = await makeAppClient(t, { type: 'public', redirectUris: ['com.example.app:/oauth/callback'] });
    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier } = await obtainCode(agent, { ...client, clientSecret: '' });
    const res = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: 'com.example.app:/oauth/callback',
      client_id: client.clientId,
    });
    expect(res.status).toBe(200);
  });
});

describe('client_credentials', () => {
  test('an RFC 9068 JWT for the resource: sub = client_id, no refresh token, verified against the JWKS; introspected until the client is deactivated', async () => {
    const resource = await makeApiResource(t, { ttlSeconds: 900 });
    const client = await makeAppClient(t, {
      grantTypes: ['client_credentials'],
      redirectUris: [],
      scopes: ['read'],
      allowedResources: [resource.identifier],
    });
    const auth = basicAuth(client.clientId, client.clientSecret!);
    const res = await token({ grant_type: 'client_credentials', scope: 'invoices:read read', resource: resource.identifier }, auth);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 900, scope: 'read invoices:read' });
    const { payload, protectedHeader } = await verifyAtJwt(res.body.access_token, resource.identifier);
    expect(protectedHeader.typ).toBe('at+jwt');
    expect(payload).toMatchObject({
      sub: client.clientId,
      client_id: client.clientId,
      aud: resource.identifier,
      scope: 'read invoices:read',
    });
    expect(payload.exp! - payload.iat!).toBe(900);
    expect(typeof payload.jti).toBe('string');
    expect(payload).not.toHaveProperty('sid');
    expect(await introspect(res.body.access_token)).toMatchObject({
      active: true,
      sub: client.clientId,
      aud: resource.identifier,
      token_type: 'Bearer',
    });

    // The token is useless at our own API (its audience is the resource).
    expect((await api().get('/api/oauth/userinfo').set('Authorization', `Bearer ${res.body.access_token}`)).status).toBe(401);

    const defaulted = await token({ grant_type: 'client_credentials' }, auth);
    // Without `scope`, only the API's own scopes: the client's unrelated `read` means nothing to this audience (issue 32).
    expect(defaulted.body.scope).toBe('invoices:read invoices:write');
    expect((await verifyAtJwt(defaulted.body.access_token, resource.identifier)).payload.scope).toBe('invoices:read invoices:write');
    expect((await verifyAtJwt(defaulted.body.access_token, resource.identifier)).payload.aud).toBe(resource.identifier);

    await t.db('oauth_clients').where({ client_id: client.clientId }).update({ is_active: false });
    expect(await introspect(res.body.access_token)).toEqual({ active: false });
  });

  test.each([
    ['a scope beyond the client and the resource', { scope: 'admin' }, 'invalid_scope'],
    ['openid (no user)', { scope: 'openid' }, 'invalid_scope'],
    ['a resource that is not an absolute URI', { resource: 'invoices' }, 'invalid_target'],
    ['an unregistered resource', { resource: 'https://unknown.test/' }, 'invalid_target'],
    ['a registered resource the client is not allowed', { resource: 'OTHER' }, 'invalid_target'],
  ])('%s -> 400 %s', async (_name, form, error) => {
    const resource = await makeApiResource(t);
    const other = await makeApiResource(t);
    const client = await makeAppClient(t, {
      grantTypes: ['client_credentials'],
      redirectUris: [],
      scopes: ['read'],
      allowedResources: [resource.identifier],
    });
    const body: Record<string, string> = { grant_type: 'client_credentials', resource: resource.identifier, ...form };
    if (body.resource === 'OTHER') body.resource = other.identifier;
    const res = await token(body, basicAuth(client.clientId, client.clientSecret!));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
    expect(res.body).not.toHaveProperty('access_token');
  });

  test('a client changed elsewhere (secret rotated, API withdrawn, client deactivated) applies to the very next request', async () => {
    const resource = await makeApiResource(t);
    const client = await makeAppClient(t, {
      grantTypes: ['client_credentials'],
      redirectUris: [],
      scopes: ['read'],
      allowedResources: [resource.identifier],
    });
    const auth = basicAuth(client.clientId, client.clientSecret!);
    const form = { grant_type: 'client_credentials', resource: resource.identifier };
    expect((await token(form, auth)).status).toBe(200);
    expect((await token(form, auth)).status).toBe(200);
    // Another instance (or an operator's SQL) changes the client: the next request reads it afresh (issue 22).
    await t
      .db('oauth_clients')
      .where({ client_id: client.clientId })
      .update({ allowed_resources: JSON.stringify([]) });
    expect((await token(form, auth)).body.error).toBe('invalid_target');
    await t
      .db('oauth_clients')
      .where({ client_id: client.clientId })
      .update({ allowed_resources: JSON.stringify([resource.identifier]) });
    expect((await token(form, auth)).status).toBe(200);
    await t.db('api_resources').where({ id: resource.id }).delete();
    expect((await token(form, auth)).body.error).toBe('invalid_target');
    const defaulted = await token({ grant_type: 'client_credentials' }, auth);
    expect(jose.decodeJwt(defaulted.body.access_token).aud).toBe(t.config.oidcIssuer);
    await t
      .db('oauth_clients')
      .where({ client_id: client.clientId })
      .update({ secret_hash: 'f'.repeat(64) });
    const rotated = await token({ grant_type: 'client_credentials', scope: 'read' }, auth);
    expect(rotated.status).toBe(401);
    expect(rotated.body.error).toBe('invalid_client');
  });

  test('two resource parameters -> invalid_request', async () => {
    const client = await makeAppClient(t, { grantTypes: ['client_credentials'], redirectUris: [], scopes: ['read'] });
    const res = await api()
      .post('/api/oauth/token')
      .set('Authorization', basicAuth(client.clientId, client.clientSecret!))
      .type('form')
      .send('grant_type=client_credentials&resource=https%3A%2F%2Fa.test%2F&resource=https%3A%2F%2Fb.test%2F');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});

describe('resource indicators on user grants', () => {
  test('resource at authorize: an RFC 9068 token with sid; refresh keeps working; revoking the refresh token ends the JWT at introspection', async () => {
    const resource = await makeApiResource(t, { scopes: ['invoices:read'] });
    const client = await makeAppClient(t, { allowedResources: [resource.identifier] });
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const { code, verifier, redirectUri } = await obtainCode(
      agent,
      { ...client, clientSecret: client.clientSecret! },
      { scope: 'openid invoices:read', resource: resource.identifier },
    );
    const auth = basicAuth(client.clientId, client.clientSecret!);
    const res = await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri }, auth);
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('openid invoices:read');
    const { payload } = await verifyAtJwt(res.body.access_token, resource.identifier);
    expect(payload).toMatchObject({ sub: user.id, client_id: client.clientId, scope: 'openid invoices:read', sid: expect.any(String) });
    // at_hash of the id_token covers the access token actually returned.
    const idClaims = jose.decodeJwt(res.body.id_token);
    expect(typeof idClaims.at_hash).toBe('string');

    const refreshed = await token(
      { grant_type: 'refresh_token', refresh_token: res.body.refresh_token, resource: resource.identifier },
      auth,
    );
    expect(refreshed.status).toBe(200);
    expect((await verifyAtJwt(refreshed.body.access_token, resource.identifier)).payload.sid).toBe(payload.sid);
    const plain = await token({ grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token }, auth);
    expect(jose.decodeProtectedHeader(plain.body.access_token).alg).toBe('HS256');

    expect(await introspect(refreshed.body.access_token)).toMatchObject({ active: true, sid: payload.sid, aud: resource.identifier });
    await api().post('/api/oauth/revoke').set('Authorization', auth).type('form').send({ token: plain.body.refresh_token });
    expect(await introspect(refreshed.body.access_token)).toEqual({ active: false });
  });

  test('revoking the RFC 9068 token itself revokes its session', async () => {
    const resource = await makeApiResource(t);
    const client = await makeAppClient(t, { allowedResources: [resource.identifier] });
    const { agent } = await signIn(t, await makeUser(t));
    const { code, verifier, redirectUri } = await obtainCode(
      agent,
      { ...client, clientSecret: client.clientSecret! },
      { scope: 'openid', resource: resource.identifier },
    );
    const auth = basicAuth(client.clientId, client.clientSecret!);
    const res = await token(
      { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, resource: resource.identifier },
      auth,
    );
    expect(res.status).toBe(200);
    expect(await introspect(res.body.access_token)).toMatchObject({ active: true });
    expect(
      (await api().post('/api/oauth/revoke').set('Authorization', auth).type('form').send({ token: res.body.access_token })).status,
    ).toBe(200);
    expect(await introspect(res.body.access_token)).toEqual({ active: false });
    expect((await token({ grant_type: 'refresh_token', refresh_token: res.body.refresh_token }, auth)).body.error).toBe('invalid_grant');
  });

  test('without resource the spec token is unchanged; a different resource at token than at authorize -> invalid_target', async () => {
    const a = await makeApiResource(t);
    const b = await makeApiResource(t);
    const client = await makeAppClient(t, { allowedResources: [a.identifier, b.identifier] });
    const { agent } = await signIn(t, await makeUser(t));
    const auth = basicAuth(client.clientId, client.clientSecret!);
    const first = await obtainCode(agent, { ...client, clientSecret: client.clientSecret! }, { scope: 'openid' });
    const spec = await token(
      { grant_type: 'authorization_code', code: first.code, code_verifier: first.verifier, redirect_uri: first.redirectUri },
      auth,
    );
    expect(jose.decodeProtectedHeader(spec.body.access_token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(spec.body.expires_in).toBe(3600);

    const second = await obtainCode(agent, { ...client, clientSecret: client.clientSecret! }, { scope: 'openid', resource: a.identifier });
    const before = await sessionsCount();
    const res = await token(
      {
        grant_type: 'authorization_code',
        code: second.code,
        code_verifier: second.verifier,
        redirect_uri: second.redirectUri,
        resource: b.identifier,
      },
      auth,
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_target');
    expect(await sessionsCount()).toBe(before);
  });

  test('authorize: an unknown or not-allowed resource is redirected as invalid_target', async () => {
    const other = await makeApiResource(t);
    const client = await makeAppClient(t);
    const { agent } = await signIn(t, await makeUser(t));
    for (const resource of ['https://unknown.test/', other.identifier, 'not a uri']) {
      const res = await agent.get(authorizePath(authorizeParams(client, { resource }).params));
      expect(res.status).toBe(302);
      expect(locationParams(res.headers.location).get('error')).toBe('invalid_target');
    }
  });
});

describe('device authorization grant', () => {
  const deviceClient = (extra: Parameters<typeof makeAppClient>[1] = {}) =>
    makeAppClient(t, { type: 'public', grantTypes: [DEVICE_GRANT, 'refresh_token'], redirectUris: [], name: 'Living-room TV', ...extra });
  const start = (clientId: string, form: Record<string, string> = { scope: 'openid profile' }) =>
    api()
      .post('/api/oauth/device_authorization')
      .type('form')
      .send({ client_id: clientId, ...form });
  const poll = (clientId: string, deviceCode: string) => token({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId });

  test('pending, slow_down (interval grows by 5 s), approval on /device with the code typed in lower case without the dash, tokens exactly once', async () => {
    const client = await deviceClient();
    const started = await start(client.clientId);
    expect(started.status).toBe(200);
    expect(started.body).toEqual({
      device_code: expect.any(String),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: 'http://sso.test/device',
      verification_uri_complete: `http://sso.test/device?user_code=${started.body.user_code}`,
      expires_in: 600,
      interval: 5,
    });
    const { device_code: deviceCode, user_code: userCode } = started.body;
    expect((await poll(client.clientId, deviceCode)).body.error).toBe('authorization_pending');
    const fast = await poll(client.clientId, deviceCode);
    expect(fast.status).toBe(400);
    expect(fast.body.error).toBe('slow_down');
    expect(Number((await t.db('oauth_device_codes').first('interval_s').where({ client_id: client.clientId })).interval_s)).toBe(10);
    t.clock.advance(6);
    expect((await poll(client.clientId, deviceCode)).body.error).toBe('slow_down');
    t.clock.advance(16);
    expect((await poll(client.clientId, deviceCode)).body.error).toBe('authorization_pending');

    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const signedInAt = Math.floor(t.clock.now().getTime() / 1000);
    t.clock.advance(120);
    const entry = await agent.get('/device');
    const confirm = await agent
      .post('/device')
      .type('form')
      .send({ user_code: userCode.toLowerCase().replace('-', ''), csrf: csrfOf(entry.text) });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Living-room TV');
    expect(confirm.text).toContain('See your name');
    const done = await agent
      .post('/device/decide')
      .type('form')
      .send({ user_code: userCode, decision: 'approve', csrf: csrfOf(confirm.text) });
    expect(done.status).toBe(200);
    expect(done.text).toContain('Device connected');

    t.clock.advance(16);
    const other = await deviceClient();
    expect((await poll(other.clientId, deviceCode)).body.error).toBe('invalid_grant');
    t.clock.advance(16);
    const tokens = await poll(client.clientId, deviceCode);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({
      token_type: 'Bearer',
      scope: 'openid profile',
      refresh_token: expect.any(String),
      id_token: expect.any(String),
    });
    const idClaims = jose.decodeJwt(tokens.body.id_token);
    expect(idClaims).toMatchObject({ sub: user.id, aud: client.clientId, amr: ['pwd'] });
    // auth_time is the sign-in's, two minutes before the approval.
    expect(Math.abs((idClaims.auth_time as number) - signedInAt)).toBeLessThanOrEqual(1);
    t.clock.advance(11);
    const again = await poll(client.clientId, deviceCode);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    // The used user code is refused on /device too.
    const reuse = await answerOnDevicePage(agent, userCode, 'approve').catch((err: Error) => err);
    expect(String(reuse)).toContain('POST /device answered 400');
  });

  test('concurrent polls after approval: exactly one gets tokens', async () => {
    const client = await deviceClient();
    const { device_code: deviceCode, user_code: userCode } = (await start(client.clientId)).body;
    const { agent } = await signIn(t, await makeUser(t));
    expect((await answerOnDevicePage(agent, userCode, 'approve')).status).toBe(200);
    const before = await sessionsCount();
    const answers = await Promise.all(Array.from({ length: 6 }, () => poll(client.clientId, deviceCode)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(await sessionsCount()).toBe(before + 1);
  });

  test('deny -> 400 access_denied; after 600 s -> expired_token', async () => {
    const client = await deviceClient();
    const denied = (await start(client.clientId)).body;
    const { agent } = await signIn(t, await makeUser(t));
    const page = await answerOnDevicePage(agent, denied.user_code, 'deny');
    expect(page.text).toContain('Request denied');
    // RFC 8628 §3.5 answers with RFC 6749 §5.2's error response: 400, not 403 (CONTRACT §23).
    const deniedPoll = await poll(client.clientId, denied.device_code);
    expect(deniedPoll.status).toBe(400);
    expect(deniedPoll.body).toEqual({ error: 'access_denied', error_description: 'The user denied the request' });
    expect(deniedPoll.headers['cache-control']).toBe('no-store');
    const late = (await start(client.clientId)).body;
    t.clock.advance(601);
    expect((await poll(client.clientId, late.device_code)).body.error).toBe('expired_token');
  });

  test('confidential device clients authenticate with their secret; bad device requests', async () => {
    const resource = await makeApiResource(t);
    const client = await makeAppClient(t, { grantTypes: [DEVICE_GRANT], redirectUris: [], allowedResources: [resource.identifier] });
    const auth = basicAuth(client.clientId, client.clientSecret!);
    const ok = await api()
      .post('/api/oauth/device_authorization')
      .set('Authorization', auth)
      .type('form')
      .send({ scope: 'openid invoices:read', resource: resource.identifier });
    expect(ok.status).toBe(200);
    const noSecret = await start(client.clientId);
    expect(noSecret.status).toBe(401);
    expect(noSecret.body.error).toBe('invalid_client');
    const send = (form: Record<string, string>) =>
      api().post('/api/oauth/device_authorization').set('Authorization', auth).type('form').send(form);
    expect((await send({})).body.error).toBe('invalid_request');
    expect((await send({ scope: 'admin' })).body.error).toBe('invalid_scope');
    expect((await send({ scope: 'openid', resource: 'https://nope.test/' })).body.error).toBe('invalid_target');
    expect((await poll(client.clientId, 'made-up')).status).toBe(401);
    const made = await token({ grant_type: DEVICE_GRANT, device_code: 'made-up' }, auth);
    expect(made.body.error).toBe('invalid_grant');
    expect((await token({ grant_type: DEVICE_GRANT }, auth)).body.error).toBe('invalid_request');
  });

  test('/device: 5 wrong codes a minute per browser session, then 429 even for a right code', async () => {
    const client = await deviceClient();
    const { user_code: userCode } = (await start(client.clientId)).body;
    const { agent } = await signIn(t, await makeUser(t));
    const csrf = csrfOf((await agent.get('/device')).text);
    for (let i = 0; i < 5; i++) {
      const wrong = await agent
        .post('/device')
        .type('form')
        .send({ user_code: `BBBB-BBB${'CDFGH'[i]}`, csrf });
      expect(wrong.status).toBe(400);
      expect(wrong.text).toContain('That code is not valid');
    }
    const blocked = await agent.post('/device').type('form').send({ user_code: userCode, csrf });
    expect(blocked.status).toBe(429);
    const decide = await agent.post('/device/decide').type('form').send({ user_code: userCode, decision: 'approve', csrf });
    expect(decide.status).toBe(429);
    // Another browser session has its own budget; the first one's comes back after a minute.
    const { agent: second } = await signIn(t, await makeUser(t));
    const secondCsrf = csrfOf((await second.get('/device')).text);
    expect((await second.post('/device').type('form').send({ user_code: userCode, csrf: secondCsrf })).status).toBe(200);
    t.clock.advance(61);
    expect((await agent.post('/device').type('form').send({ user_code: userCode, csrf })).status).toBe(200);
  });

  test('/device: signed out -> sign-in with return_to; an account with a second factor whose session has none signs in again', async () => {
    const anonymous = await api().get('/device?user_code=BCDF-GHJK');
    expect(anonymous.status).toBe(303);
    const login = new URL(anonymous.headers.location);
    expect(login.pathname).toBe('/login');
    expect(login.searchParams.get('return_to')).toBe('http://sso.test/device?user_code=BCDF-GHJK');

    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const { agent: enrolling } = await signIn(t, user);
    const { secret } = await enrolTotp(t, enrolling);
    const stale = await agent.get('/device');
    expect(stale.status).toBe(303);
    expect(new URL(stale.headers.location).pathname).toBe('/login');
    const { agent: withTotp } = await signInWithTotp(t, user, secret);
    expect((await withTotp.get('/device')).status).toBe(200);
  });

  test('a form post without the CSRF pair is refused', async () => {
    const { agent } = await signIn(t, await makeUser(t));
    await agent.get('/device');
    expect((await agent.post('/device').type('form').send({ user_code: 'BCDF-GHJK' })).status).toBe(403);
  });
});
