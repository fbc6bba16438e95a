import request from 'supertest';
import { csrfOf, makeApiResource, makeAppClient } from '../helpers/apps';
import { makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { authorizePath, basicAuth, locationParams, obtainCode, pkcePair } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 31 item 5, "what travels with a grant, declared once": the grant context (scope, resource, nonce, auth_time,
 * amr, browser session, DPoP binding) is stored by the pending request, the code, the device code and the OAuth session
 * the refresh token rotates, and read back through one schema. The session records the API the grant was for; a
 * refresh gets a token for an API only by naming it (`resource`, RFC 8707), judged again by the resource resolver, and
 * without it the spec's HS256 token; a pushed request (RFC 9126) carries its context to the code; a corrupted stored
 * context is refused as invalid_grant, never a 500.
 */
const jose = require('jose') as typeof import('jose');
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';

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
  const req = api().post('/api/oauth/token');
  return (auth ? req.set('Authorization', auth) : req).type('form').send(form);
};

/** A confidential client allowed one API, and a signed-in person. */
async function setUp() {
  const a = await makeApiResource(t, { name: 'Invoices API', scopes: ['invoices:read'] });
  const client = await makeAppClient(t, { allowedResources: [a.identifier] });
  const user = await makeUser(t);
  const { agent } = await signIn(t, user);
  return { a, client, user, agent, auth: basicAuth(client.clientId, client.clientSecret!) };
}

async function exchange(auth: string, got: { code: string; verifier: string; redirectUri: string }) {
  return token({ grant_type: 'authorization_code', code: got.code, code_verifier: got.verifier, redirect_uri: got.redirectUri }, auth);
}

/** The session a token belongs to (its `sid`, or for an RFC 9068 token the session it was issued with). */
const sessionOf = async (userId: string, clientId: string) =>
  t.db('sessions').where({ user_id: userId, client_id: clientId }).orderBy('created_at', 'desc').first();

describe('refresh after a grant for an API', () => {
  test('code grant with resource: the session records the API; a refresh naming it gets its RFC 9068 token, one naming none the HS256 token', async () => {
    const { a, client, user, agent, auth } = await setUp();
    const got = await obtainCode(agent, client, { scope: 'openid invoices:read', resource: a.identifier, nonce: 'n-1' });
    const first = await exchange(auth, got);
    expect(first.status).toBe(200);
    expect(jose.decodeJwt(first.body.access_token)).toMatchObject({ aud: a.identifier, scope: 'openid invoices:read' });
    // The OAuth session keeps the context's resource beside its scope, auth_time and amr.
    const session = await sessionOf(user.id, client.clientId);
    expect(session).toMatchObject({ resource: a.identifier, scope: 'openid invoices:read', amr: ['pwd'] });

    let refreshToken: string = first.body.refresh_token;
    for (let round = 0; round < 2; round++) {
      const refreshed = await token({ grant_type: 'refresh_token', refresh_token: refreshToken, resource: a.identifier }, auth);
      expect(refreshed.status).toBe(200);
      expect(jose.decodeProtectedHeader(refreshed.body.access_token).typ).toBe('at+jwt');
      const claims = jose.decodeJwt(refreshed.body.access_token);
      expect(claims).toMatchObject({ aud: a.identifier, scope: 'openid invoices:read', sub: user.id, client_id: client.clientId });
      expect(refreshed.body.scope).toBe('openid invoices:read');
      expect(refreshed.body.expires_in).toBe(3600);
      // The id_token of the refresh hashes the RFC 9068 token actually returned.
      expect(typeof refreshed.body.id_token).toBe('string');
      refreshToken = refreshed.body.refresh_token;
    }
    // Without resource: the spec's HS256 access token, as for any token request that names no API.
    const plain = await token({ grant_type: 'refresh_token', refresh_token: refreshToken }, auth);
    expect(plain.status).toBe(200);
    expect(jose.decodeProtectedHeader(plain.body.access_token).alg).toBe('HS256');
    expect(jose.decodeProtectedHeader(plain.body.access_token).typ).not.toBe('at+jwt');
    expect((await sessionOf(user.id, client.clientId)).resource).toBe(a.identifier);
  });

  test('sign-in only: the refresh stays the session token (not an RFC 9068 token)', async () => {
    const { client, user, agent, auth } = await setUp();
    const first = await exchange(auth, await obtainCode(agent, client, { scope: 'openid' }));
    expect((await sessionOf(user.id, client.clientId)).resource).toBeNull();
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, auth);
    expect(refreshed.status).toBe(200);
    expect(jose.decodeProtectedHeader(refreshed.body.access_token).alg).toBe('HS256');
    expect(jose.decodeProtectedHeader(refreshed.body.access_token).typ).not.toBe('at+jwt');
  });

  test('an administrator removed the API from the client: a refresh naming it is invalid_target, issues nothing and spends nothing', async () => {
    const { a, client, user, agent, auth } = await setUp();
    const first = await exchange(auth, await obtainCode(agent, client, { scope: 'openid invoices:read', resource: a.identifier }));
    expect(first.status).toBe(200);
    const put = await api().put(`/api/admin/oauth-clients/${client.clientId}`).set('Authorization', admin).send({ allowed_resources: [] });
    expect(put.status).toBe(200);
    expect(put.body.client.allowed_resources).toEqual([]);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, resource: a.identifier }, auth);
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_target');
    expect(refreshed.body).not.toHaveProperty('access_token');
    expect((await sessionOf(user.id, client.clientId)).resource).toBe(a.identifier);
    // Judged before the rotation: the refresh token still works, for the HS256 token.
    const plain = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, auth);
    expect(plain.status).toBe(200);
    expect(jose.decodeProtectedHeader(plain.body.access_token).alg).toBe('HS256');
  });

  test('the device grant: a refresh naming the API approved on /device gets its token', async () => {
    const a = await makeApiResource(t, { name: 'Telemetry API', scopes: ['telemetry:write'] });
    const client = await makeAppClient(t, {
      type: 'public',
      grantTypes: [DEVICE, 'refresh_token'],
      redirectUris: [],
      allowedResources: [a.identifier],
    });
    const polled = await deviceTokens(client.clientId, a.identifier);
    expect(polled.status).toBe(200);
    expect(jose.decodeJwt(polled.body.access_token).aud).toBe(a.identifier);
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: polled.body.refresh_token,
      client_id: client.clientId,
      resource: a.identifier,
    });
    expect(refreshed.status).toBe(200);
    expect(jose.decodeJwt(refreshed.body.access_token)).toMatchObject({ aud: a.identifier, scope: 'openid telemetry:write' });
  });
});

/** Starts a device authorization for the API, approves it on /device as a new person; returns the first poll (or `before` it). */
async function deviceTokens(clientId: string, resource: string, before?: () => Promise<void>) {
  const started = await api()
    .post('/api/oauth/device_authorization')
    .type('form')
    .send({ client_id: clientId, scope: 'openid telemetry:write', resource });
  expect(started.status).toBe(200);
  const { agent } = await signIn(t, await makeUser(t));
  const entry = await agent.get('/device');
  const confirm = await agent
    .post('/device')
    .type('form')
    .send({ user_code: started.body.user_code, csrf: csrfOf(entry.text) });
  const decided = await agent
    .post('/device/decide')
    .type('form')
    .send({ user_code: started.body.user_code, decision: 'approve', csrf: csrfOf(confirm.text) });
  expect(decided.status).toBeLessThan(400);
  await before?.();
  return token({ grant_type: DEVICE, device_code: started.body.device_code, client_id: clientId });
}

describe('PAR: the pushed request carries its context to the code', () => {
  test('resource, scope and nonce pushed; authorize with request_uri alone (other query parameters ignored); the code and its tokens carry them', async () => {
    const { a, client, user, agent, auth } = await setUp();
    const { verifier, challenge } = pkcePair();
    const jkt = 'A'.repeat(43);
    const pushed = await api().post('/api/oauth/par').set('Authorization', auth).type('form').send({
      response_type: 'code',
      redirect_uri: client.redirectUris[0],
      scope: 'openid invoices:read',
      state: 'pushed-state',
      nonce: 'pushed-nonce',
      resource: a.identifier,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(pushed.status).toBe(201);
    // Only client_id and request_uri travel through the browser; other query parameters are not the request.
    const start = await agent.get(
      authorizePath({ client_id: client.clientId, request_uri: pushed.body.request_uri, scope: 'openid', nonce: 'other', dpop_jkt: jkt }),
    );
    expect(start.status).toBe(302);
    const consent = new URL(start.headers.location);
    expect(consent.pathname).toBe('/consent');
    const requestId = consent.searchParams.get('request_id')!;
    const pending = await t.db('oauth_authorization_requests').where({ id: requestId }).first();
    expect(pending).toMatchObject({
      scope: 'openid invoices:read',
      resource: a.identifier,
      nonce: 'pushed-nonce',
      dpop_jkt: null,
      amr: ['pwd'],
    });
    const approved = await agent.post('/api/oauth/authorize/approve').send({ request_id: requestId });
    expect(approved.status).toBe(200);
    const back = locationParams(approved.body.redirect_url);
    expect(back.get('state')).toBe('pushed-state');
    const tokens = await exchange(auth, { code: back.get('code')!, verifier, redirectUri: client.redirectUris[0] });
    expect(tokens.status).toBe(200);
    expect(jose.decodeJwt(tokens.body.access_token)).toMatchObject({ aud: a.identifier, scope: 'openid invoices:read' });
    expect(jose.decodeJwt(tokens.body.id_token)).toMatchObject({ nonce: 'pushed-nonce', sub: user.id, amr: ['pwd'] });
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, resource: a.identifier }, auth);
    expect(jose.decodeJwt(refreshed.body.access_token).aud).toBe(a.identifier);
  });

  test('a corrupted pushed request is refused as unknown (400), never a 500', async () => {
    const { a, client, agent, auth } = await setUp();
    const pushed = await api().post('/api/oauth/par').set('Authorization', auth).type('form').send({
      response_type: 'code',
      redirect_uri: client.redirectUris[0],
      scope: 'openid',
      resource: a.identifier,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    });
    expect(pushed.status).toBe(201);
    await t
      .db('oauth_pushed_requests')
      .where({ client_id: client.clientId })
      .update({ params: JSON.stringify({ scope: ['openid', 'x'] }) });
    const res = await agent
      .get(authorizePath({ client_id: client.clientId, request_uri: pushed.body.request_uri }))
      .set('Accept', 'application/json');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.error_description).toBe('request_uri names a malformed pushed request: push the request again');
  });
});

describe('a corrupted stored context is invalid_grant (400), never a 500', () => {
  test('an authorization code whose amr is not a list of methods', async () => {
    const { client, agent, auth } = await setUp();
    const got = await obtainCode(agent, client, { scope: 'openid' });
    await t
      .db('oauth_codes')
      .where({ client_id: client.clientId })
      .whereNull('used_at')
      .update({ amr: t.db.raw(`'{"not a method"}'::text[]`) });
    const res = await exchange(auth, got);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The stored authorization is malformed; start a new authorization',
    });
  });

  test('an authorization code whose scope is not scope-tokens', async () => {
    const { client, agent, auth } = await setUp();
    const got = await obtainCode(agent, client, { scope: 'openid' });
    await t.db('oauth_codes').where({ client_id: client.clientId }).whereNull('used_at').update({ scope: 'openid  "profile"\n' });
    const res = await exchange(auth, got);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  test('a pending request whose amr is empty: approving it is refused, no code is issued', async () => {
    const { client, agent } = await setUp();
    const start = await agent.get(
      authorizePath({
        client_id: client.clientId,
        response_type: 'code',
        redirect_uri: client.redirectUris[0],
        scope: 'openid',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }),
    );
    const requestId = new URL(start.headers.location).searchParams.get('request_id')!;
    await t
      .db('oauth_authorization_requests')
      .where({ id: requestId })
      .update({ amr: t.db.raw(`'{}'::text[]`) });
    const approved = await agent.post('/api/oauth/authorize/approve').send({ request_id: requestId });
    expect(approved.status).toBe(400);
    expect(approved.body.error).toBe('invalid_grant');
    expect(await t.db('oauth_codes').where({ client_id: client.clientId }).count('* as n').first()).toEqual({ n: '0' });
  });

  test('a device code whose amr (jsonb) is an object', async () => {
    const a = await makeApiResource(t, { scopes: ['telemetry:write'] });
    const client = await makeAppClient(t, {
      type: 'public',
      grantTypes: [DEVICE, 'refresh_token'],
      redirectUris: [],
      allowedResources: [a.identifier],
    });
    const polled = await deviceTokens(client.clientId, a.identifier, async () => {
      await t
        .db('oauth_device_codes')
        .where({ client_id: client.clientId })
        .update({ amr: JSON.stringify({ not: 'a list' }) });
    });
    expect(polled.status).toBe(400);
    expect(polled.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The stored authorization is malformed; start a new authorization',
    });
    expect(await t.db('sessions').where({ client_id: client.clientId }).count('* as n').first()).toEqual({ n: '0' });
  });

  test('an OAuth session whose amr was corrupted: its refresh is refused', async () => {
    const { client, user, agent, auth } = await setUp();
    const first = await exchange(auth, await obtainCode(agent, client, { scope: 'openid' }));
    const session = await sessionOf(user.id, client.clientId);
    await t
      .db('sessions')
      .where({ id: session.id })
      .update({ amr: t.db.raw(`'{"pwd","no such method!"}'::text[]`) });
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, auth);
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
    expect(refreshed.body).not.toHaveProperty('access_token');
  });

  test.each([
    ['a scope that is not scope-tokens', () => ({ scope: 'openid  "profile"' })],
    ['an empty amr list', () => ({ amr: t.db.raw(`'{}'::text[]`) })],
  ])('an OAuth session with %s: its refresh is refused and spends nothing', async (_label, corrupted) => {
    const { client, user, agent, auth } = await setUp();
    const first = await exchange(auth, await obtainCode(agent, client, { scope: 'openid' }));
    const session = await sessionOf(user.id, client.clientId);
    await t.db('sessions').where({ id: session.id }).update(corrupted());
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, auth);
    expect(refreshed.status).toBe(400);
    expect(refreshed.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The stored authorization is malformed; start a new authorization',
    });
    // Refused before the rotation: the presented token is still unused and has no successor.
    expect(await t.db('refresh_tokens').where({ session_id: session.id }).select('used_at')).toEqual([{ used_at: null }]);
  });
});
