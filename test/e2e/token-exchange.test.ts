import fc from 'fast-check';
import * as jose from 'jose';
import request from 'supertest';
import { makeApiResource, makeAppClient } from '../helpers/apps';
import { makeClientKey, type ClientKeyPair } from '../helpers/client-keys';
import { claimsOf, dpopProof, thumbprintOf } from '../helpers/dpop';
import { makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { basicAuth, obtainCode } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 34, token exchange (RFC 8693, docs/token-exchange.md): a confidential client allowed the grant turns a user's
 * token this server issued into an RFC 9068 token for an API it is allowed, never wider than the subject token, bound
 * to the subject's DPoP key, with `act` for a delegation; every refusal, introspection, revocation in both directions,
 * the audit row, a race with revocation and a fuzz of the parameters. The interop with oauth4webapi is in
 * token-exchange-library.test.ts.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AT = 'urn:ietf:params:oauth:token-type:access_token';
const ID = 'urn:ietf:params:oauth:token-type:id_token';

let t: TestApp;
let tokenUrl: string;
let orders: Awaited<ReturnType<typeof makeApiResource>>;
let inventory: Awaited<ReturnType<typeof makeApiResource>>;
let billing: Awaited<ReturnType<typeof makeApiResource>>;
/** An API that defines one of this server's OpenID scopes. */
let people: Awaited<ReturnType<typeof makeApiResource>>;
let directory: Client;
let key: ClientKeyPair;
let otherKey: ClientKeyPair;

type Client = Awaited<ReturnType<typeof makeAppClient>> & { auth: string };
/** The front end: a web app whose users approve it for the orders API. */
let web: Client;
/** The orders API's own client: exchanges the tokens it receives for tokens for the inventory API. */
let ordersApi: Client;

const withAuth = (c: Awaited<ReturnType<typeof makeAppClient>>): Client => ({ ...c, auth: basicAuth(c.clientId, c.clientSecret!) });

beforeAll(async () => {
  t = await createTestApp();
  tokenUrl = `${t.ctx.config.baseUrl}/api/oauth/token`;
  orders = await makeApiResource(t, { scopes: ['orders:read', 'orders:write'] });
  inventory = await makeApiResource(t, { scopes: ['orders:read', 'stock:read'] });
  billing = await makeApiResource(t, { scopes: ['invoices:read'] });
  people = await makeApiResource(t, { scopes: ['profile', 'people:read'] });
  key = await makeClientKey('ES256');
  otherKey = await makeClientKey('ES256');
  web = withAuth(
    await makeAppClient(t, {
      grantTypes: ['authorization_code', 'refresh_token', GRANT],
      allowedResources: [orders.identifier, inventory.identifier, people.identifier],
      scopes: ['openid', 'profile', 'email', 'orders:read'],
    }),
  );
  ordersApi = await exchanger([inventory.identifier, billing.identifier]);
  directory = await exchanger([people.identifier, inventory.identifier]);
});
afterAll(async () => {
  await t?.close();
});

async function exchanger(allowedResources: string[], grantTypes = [GRANT, 'client_credentials']): Promise<Client> {
  return withAuth(await makeAppClient(t, { grantTypes, allowedResources, redirectUris: [], scopes: [] }));
}

const token = (auth: string, form: Record<string, string | undefined>, headers: Record<string, string> = {}) =>
  request(t.app)
    .post('/api/oauth/token')
    .set({ Authorization: auth, ...headers })
    .type('form')
    .send(Object.fromEntries(Object.entries(form).filter(([, v]) => v !== undefined)));

const exchange = (caller: Client, form: Record<string, string | undefined>, headers: Record<string, string> = {}) =>
  token(caller.auth, { grant_type: GRANT, subject_token_type: AT, resource: inventory.identifier, ...form }, headers);

const proof = (k: ClientKeyPair) => dpopProof(k, { htu: tokenUrl, now: t.clock.now() });

async function introspect(value: string) {
  const rs = await exchanger([], ['client_credentials']);
  const res = await request(t.app).post('/api/oauth/introspect').set('Authorization', rs.auth).type('form').send({ token: value });
  expect(res.status).toBe(200);
  return res.body as Record<string, unknown>;
}

/** A user's tokens for `web`: through the browser, for the orders API unless `resource` says otherwise. */
async function userTokens(
  options: { scope?: string; resource?: string | null; dpop?: ClientKeyPair } = {},
): Promise<{ access_token: string; refresh_token: string; id_token?: string; scope: string; userId: string }> {
  const user = await makeUser(t);
  const { agent } = await signIn(t, user);
  const resource = options.resource === null ? undefined : (options.resource ?? orders.identifier);
  const scope = options.scope ?? 'openid orders:read orders:write';
  const { code, verifier, redirectUri } = await obtainCode(agent, web, { scope, ...(resource ? { resource } : {}) });
  const res = await token(
    web.auth,
    { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, resource },
    options.dpop ? { DPoP: await proof(options.dpop) } : {},
  );
  expect(res.status).toBe(200);
  const { sub } = claimsOf(res.body.access_token) as { sub?: string; userId?: string };
  return { ...res.body, userId: sub ?? (claimsOf(res.body.access_token).userId as string) };
}

const verify = async (value: string) => {
  const jwks = jose.createLocalJWKSet((await request(t.app).get('/api/oauth/jwks')).body);
  return (await jose.jwtVerify(value, jwks, { issuer: t.ctx.config.oidcIssuer, typ: 'at+jwt', currentDate: t.clock.now() })).payload;
};

const expectRefused = (res: request.Response, status: number, error: string) => {
  expect({ status: res.status, error: res.body.error }).toEqual({ status, error });
  expect(typeof res.body.error_description).toBe('string');
  expect(res.body.access_token).toBeUndefined();
};

describe('an API exchanges a user’s token for a token for another API (impersonation)', () => {
  test('RFC 9068 subject: narrowed to the scopes both share, for the caller, introspected, audited', async () => {
    const subject = await userTokens();
    const res = await exchange(ordersApi, { subject_token: subject.access_token });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toContain('no-store');
    expect(res.body).toEqual({
      access_token: expect.any(String),
      issued_token_type: AT,
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'orders:read',
    });
    const claims = await verify(res.body.access_token);
    expect(claims).toMatchObject({ sub: subject.userId, aud: inventory.identifier, client_id: ordersApi.clientId, scope: 'orders:read' });
    expect(claims.act).toBeUndefined();
    expect(claims.cnf).toBeUndefined();
    expect(await introspect(res.body.access_token)).toMatchObject({
      active: true,
      sub: subject.userId,
      client_id: ordersApi.clientId,
      aud: inventory.identifier,
      scope: 'orders:read',
      token_type: 'Bearer',
    });
    const event = await t.db('audit_events').where({ type: 'oauth.token_exchanged', subject_id: subject.userId }).first();
    expect(event).toMatchObject({ client_id: ordersApi.clientId, actor_id: null });
    expect(event.detail).toMatchObject({
      resource: inventory.identifier,
      scope: 'orders:read',
      subject_client_id: web.clientId,
      subject_type: 'access_token',
      delegation: false,
    });
    expect(JSON.stringify(event.detail)).not.toContain(subject.access_token);
  });

  test('the spec’s access token (no API) is a subject too; `audience` names the API like `resource`', async () => {
    // A token for this server carries only its OpenID scopes: an API defining one of them (profile) may be the target.
    const subject = await userTokens({ resource: null, scope: 'openid profile' });
    const res = await exchange(directory, { subject_token: subject.access_token, resource: undefined, audience: people.identifier });
    expect(res.status).toBe(200);
    expect(await verify(res.body.access_token)).toMatchObject({ aud: people.identifier, sub: subject.userId, scope: 'profile' });
    expect(res.body.scope).toBe('profile');
  });

  test('the subject token’s audience is not checked (docs/token-exchange.md): a token for an API the caller may not use, or for this server', async () => {
    // The subject is for the orders API and was issued to the web app; the caller may use neither the orders API nor
    // the web app's tokens itself.
    const forOrders = await userTokens();
    expect(claimsOf(forOrders.access_token)).toMatchObject({ aud: orders.identifier, client_id: web.clientId });
    expect(ordersApi.allowedResources).not.toContain(orders.identifier);
    const exchanged = await exchange(ordersApi, { subject_token: forOrders.access_token });
    expect(exchanged.status).toBe(200);
    expect(await verify(exchanged.body.access_token)).toMatchObject({ aud: inventory.identifier, client_id: ordersApi.clientId });
    // A token for this server itself (no API named): also a subject, for an API that defines its scopes.
    const forThisServer = await userTokens({ resource: null, scope: 'openid profile' });
    const direct = await exchange(directory, { subject_token: forThisServer.access_token, resource: people.identifier });
    expect(direct.status).toBe(200);
  });

  test('a client allowed one API gets a token for it without naming it', async () => {
    const single = await exchanger([inventory.identifier]);
    const res = await exchange(single, { subject_token: (await userTokens()).access_token, resource: undefined });
    expect(res.status).toBe(200);
    expect((await verify(res.body.access_token)).aud).toBe(inventory.identifier);
  });

  test('a requested scope within the subject’s is granted as asked', async () => {
    const wide = await makeApiResource(t, { scopes: ['orders:read', 'orders:write', 'stock:read'] });
    const caller = await exchanger([wide.identifier]);
    const subject = await userTokens();
    const res = await exchange(caller, { subject_token: subject.access_token, resource: wide.identifier, scope: 'orders:write' });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('orders:write');
  });

  test('the client’s own id_token of a live session is a subject; the session’s grant gives the scopes', async () => {
    const subject = await userTokens({ resource: null, scope: 'openid profile' });
    expect(subject.id_token).toBeDefined();
    const res = await token(web.auth, {
      grant_type: GRANT,
      subject_token: subject.id_token,
      subject_token_type: ID,
      resource: people.identifier,
    });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('profile');
    expect(await verify(res.body.access_token)).toMatchObject({ sub: subject.userId, client_id: web.clientId, aud: people.identifier });
  });

  test('an API with role-based access: the user’s roles narrow the exchanged token (narrowToRoleScopes)', async () => {
    const guarded = await makeApiResource(t, { scopes: ['orders:read'], roleBasedAccess: true });
    const caller = await exchanger([guarded.identifier]);
    const res = await exchange(caller, { subject_token: (await userTokens()).access_token, resource: guarded.identifier });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('');
    expect((await verify(res.body.access_token)).scope).toBe('');
  });
});

describe('delegation: actor_token gives act', () => {
  const ccToken = async (c: Client, headers: Record<string, string> = {}) => {
    const res = await token(c.auth, { grant_type: 'client_credentials', resource: inventory.identifier }, headers);
    expect(res.status).toBe(200);
    return res.body.access_token as string;
  };

  test('the caller’s client_credentials token as actor: act { sub }, shown by introspection, audited', async () => {
    const subject = await userTokens();
    const res = await exchange(ordersApi, {
      subject_token: subject.access_token,
      actor_token: await ccToken(ordersApi),
      actor_token_type: AT,
    });
    expect(res.status).toBe(200);
    expect((await verify(res.body.access_token)).act).toEqual({ sub: ordersApi.clientId });
    expect((await introspect(res.body.access_token)).act).toEqual({ sub: ordersApi.clientId });
    const event = await t.db('audit_events').where({ type: 'oauth.token_exchanged', subject_id: subject.userId }).first();
    expect(event.detail).toMatchObject({ delegation: true, act: { sub: ordersApi.clientId } });
  });

  test('a delegated token exchanged again: nested act with another actor, kept as is without one', async () => {
    const subject = await userTokens();
    const first = await exchange(ordersApi, {
      subject_token: subject.access_token,
      actor_token: await ccToken(ordersApi),
      actor_token_type: AT,
    });
    expect(first.status).toBe(200);
    const stock = await exchanger([inventory.identifier]);
    const second = await exchange(stock, {
      subject_token: first.body.access_token,
      actor_token: await ccToken(stock),
      actor_token_type: AT,
    });
    expect(second.status).toBe(200);
    expect((await verify(second.body.access_token)).act).toEqual({ sub: stock.clientId, act: { sub: ordersApi.clientId } });
    // Without an actor the delegation is not laundered into a plain token: the act it carried stays.
    const third = await exchange(stock, { subject_token: first.body.access_token });
    expect(third.status).toBe(200);
    expect((await verify(third.body.access_token)).act).toEqual({ sub: ordersApi.clientId });
  });

  test('an actor token of another client is invalid_grant', async () => {
    const stranger = await exchanger([inventory.identifier]);
    const res = await exchange(ordersApi, {
      subject_token: (await userTokens()).access_token,
      actor_token: await ccToken(stranger),
      actor_token_type: AT,
    });
    expectRefused(res, 400, 'invalid_grant');
    expect(res.body.error_description).toMatch(/actor_token was not issued to this client/);
  });

  test('a garbage or a user token of another client as actor is invalid_grant', async () => {
    const subject = await userTokens();
    expectRefused(
      await exchange(ordersApi, { subject_token: subject.access_token, actor_token: 'nope', actor_token_type: AT }),
      400,
      'invalid_grant',
    );
    const foreign = await userTokens();
    expectRefused(
      await exchange(ordersApi, { subject_token: subject.access_token, actor_token: foreign.access_token, actor_token_type: AT }),
      400,
      'invalid_grant',
    );
  });
});

describe('refusals', () => {
  test('a client without the grant: unauthorized_client; nothing issued', async () => {
    const plain = await exchanger([inventory.identifier], ['client_credentials']);
    expectRefused(await exchange(plain, { subject_token: (await userTokens()).access_token }), 400, 'unauthorized_client');
  });

  test('the admin API refuses the grant to a public client and offers it to a confidential one', async () => {
    const { bearer } = await makeSignedInUser(t, ['super_admin']);
    const base = { name: 'X', redirect_uris: ['https://x.test/cb'], scopes: ['openid'] };
    const pub = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({ ...base, type: 'public', grant_types: ['authorization_code', GRANT] });
    expect(pub.status).toBe(400);
    expect(JSON.stringify(pub.body)).toContain('token exchange is for confidential clients only');
    const conf = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', bearer)
      .send({ ...base, type: 'confidential', grant_types: ['authorization_code', GRANT] });
    expect(conf.status).toBe(201);
    expect(conf.body.client.grant_types).toEqual(['authorization_code', GRANT]);
  });

  test.each([
    ['no subject_token', { subject_token: undefined }, /subject_token is required/],
    ['no subject_token_type', { subject_token_type: undefined }, /subject_token_type is required/],
    ['a refresh token type', { subject_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' }, /subject_token_type must be/],
    ['a SAML type', { subject_token_type: 'urn:ietf:params:oauth:token-type:saml2' }, /subject_token_type must be/],
    ['actor_token without its type', { actor_token: 'x' }, /actor_token_type is required/],
    ['actor_token_type without a token', { actor_token_type: AT }, /without actor_token/],
    ['an id_token as actor', { actor_token: 'x', actor_token_type: ID }, /actor_token_type must be/],
    ['a refresh token requested', { requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' }, /requested_token_type/],
    ['no API named by a client allowed two', { resource: undefined }, /resource or audience/],
  ])('%s: invalid_request', async (_name, form, message) => {
    const res = await exchange(ordersApi, { subject_token: 'x.y.z', ...form });
    expectRefused(res, 400, 'invalid_request');
    expect(res.body.error_description).toMatch(message);
  });

  test('repeated parameters are invalid_request', async () => {
    const res = await request(t.app)
      .post('/api/oauth/token')
      .set('Authorization', ordersApi.auth)
      .type('form')
      .send(`grant_type=${encodeURIComponent(GRANT)}&subject_token=a&subject_token=b&subject_token_type=${encodeURIComponent(AT)}`);
    expectRefused(res, 400, 'invalid_request');
  });

  test.each([
    ['an API the client is not allowed', () => ({ resource: orders.identifier })],
    ['an unregistered API', () => ({ resource: 'https://nowhere.test/' })],
    ['not a URI', () => ({ resource: 'inventory' })],
    ['an audience the client is not allowed', () => ({ resource: undefined, audience: orders.identifier })],
    ['resource and audience naming different APIs', () => ({ resource: inventory.identifier, audience: billing.identifier })],
  ])('%s: invalid_target, before the subject token is looked at', async (_name, form) => {
    const subject = await userTokens();
    expectRefused(await exchange(ordersApi, { subject_token: subject.access_token, ...form() }), 400, 'invalid_target');
  });

  test('narrowing cannot be widened: a scope the subject lacks, or that the API lacks, or none in common is invalid_scope', async () => {
    const subject = await userTokens({ scope: 'openid orders:read' });
    // stock:read is the API's, but the user never granted it.
    expectRefused(await exchange(ordersApi, { subject_token: subject.access_token, scope: 'stock:read' }), 400, 'invalid_scope');
    // openid is the subject's, but not an inventory scope.
    expectRefused(await exchange(ordersApi, { subject_token: subject.access_token, scope: 'orders:read openid' }), 400, 'invalid_scope');
    // The subject's scopes for the orders API do not stretch to the billing API by naming it as audience.
    expectRefused(
      await exchange(ordersApi, { subject_token: subject.access_token, resource: undefined, audience: billing.identifier }),
      400,
      'invalid_scope',
    );
    // An exchanged token cannot be exchanged back into a wider one.
    const narrow = await exchange(ordersApi, { subject_token: (await userTokens()).access_token });
    const wide = await makeApiResource(t, { scopes: ['orders:read', 'orders:write'] });
    const caller = await exchanger([wide.identifier]);
    const back = await exchange(caller, { subject_token: narrow.body.access_token, resource: wide.identifier });
    expect(back.status).toBe(200);
    expect(back.body.scope).toBe('orders:read');
    expectRefused(
      await exchange(caller, { subject_token: narrow.body.access_token, resource: wide.identifier, scope: 'orders:read orders:write' }),
      400,
      'invalid_scope',
    );
  });

  test('invalid_grant: garbage, a refresh token, a first-party token, a client’s own token, a foreign id_token', async () => {
    const subject = await userTokens();
    expectRefused(await exchange(ordersApi, { subject_token: 'garbage' }), 400, 'invalid_grant');
    expectRefused(await exchange(ordersApi, { subject_token: subject.refresh_token }), 400, 'invalid_grant');
    const firstParty = await makeSignedInUser(t);
    const fp = await exchange(ordersApi, { subject_token: firstParty.accessToken });
    expectRefused(fp, 400, 'invalid_grant');
    expect(fp.body.error_description).toMatch(/first-party/);
    const cc = await token(ordersApi.auth, { grant_type: 'client_credentials', resource: inventory.identifier });
    const own = await exchange(ordersApi, { subject_token: cc.body.access_token });
    expectRefused(own, 400, 'invalid_grant');
    expect(own.body.error_description).toMatch(/does not stand for a user/);
    // An id_token is for its audience: the web app's id_token is not the orders API's to exchange.
    const withId = await userTokens({ resource: null, scope: 'openid orders:read' });
    expectRefused(await exchange(ordersApi, { subject_token: withId.id_token, subject_token_type: ID }), 400, 'invalid_grant');
    // An access token presented as an id_token (and the other way round) is refused.
    expectRefused(
      await token(web.auth, {
        grant_type: GRANT,
        subject_token: withId.access_token,
        subject_token_type: ID,
        resource: inventory.identifier,
      }),
      400,
      'invalid_grant',
    );
    expectRefused(await exchange(ordersApi, { subject_token: withId.id_token }), 400, 'invalid_grant');
  });

  test('a revoked subject token is invalid_grant; so is the id_token of an ended session', async () => {
    const subject = await userTokens({ resource: null, scope: 'openid profile' });
    const revoked = await request(t.app)
      .post('/api/oauth/revoke')
      .set('Authorization', web.auth)
      .type('form')
      .send({ token: subject.refresh_token });
    expect(revoked.status).toBe(200);
    expectRefused(await exchange(ordersApi, { subject_token: subject.access_token }), 400, 'invalid_grant');
    expectRefused(
      await token(web.auth, { grant_type: GRANT, subject_token: subject.id_token, subject_token_type: ID, resource: inventory.identifier }),
      400,
      'invalid_grant',
    );
  });

  test('an expired subject token is invalid_grant', async () => {
    const shortLived = await makeApiResource(t, { scopes: ['orders:read'], ttlSeconds: 60 });
    await t
      .db('oauth_clients')
      .where({ client_id: web.clientId })
      .update({ allowed_resources: JSON.stringify([orders.identifier, inventory.identifier, people.identifier, shortLived.identifier]) });
    const subject = await userTokens({ resource: shortLived.identifier, scope: 'openid orders:read' });
    t.clock.advance(61);
    expectRefused(await exchange(ordersApi, { subject_token: subject.access_token }), 400, 'invalid_grant');
  });
});

describe('DPoP: a bound subject token is never laundered into an unbound one', () => {
  test('without a proof, or with a proof of another key: invalid_dpop_proof; with its key: bound to that key', async () => {
    const web2 = web;
    const subject = await userTokens({ dpop: key });
    const jkt = await thumbprintOf(key);
    expect((claimsOf(subject.access_token).cnf as { jkt: string }).jkt).toBe(jkt);
    const bare = await exchange(web2, { subject_token: subject.access_token });
    expectRefused(bare, 400, 'invalid_dpop_proof');
    expectRefused(
      await exchange(web2, { subject_token: subject.access_token }, { DPoP: await proof(otherKey) }),
      400,
      'invalid_dpop_proof',
    );
    const bound = await exchange(web2, { subject_token: subject.access_token }, { DPoP: await proof(key) });
    expect(bound.status).toBe(200);
    expect(bound.body.token_type).toBe('DPoP');
    expect((await verify(bound.body.access_token)).cnf).toEqual({ jkt });
    expect(await introspect(bound.body.access_token)).toMatchObject({ token_type: 'DPoP', cnf: { jkt } });
  });

  test('a bound actor token needs a proof of its key too', async () => {
    const cc = await token(
      ordersApi.auth,
      { grant_type: 'client_credentials', resource: inventory.identifier },
      { DPoP: await proof(key) },
    );
    expect(cc.body.token_type).toBe('DPoP');
    const subject = await userTokens();
    const args = { subject_token: subject.access_token, actor_token: cc.body.access_token, actor_token_type: AT };
    expectRefused(await exchange(ordersApi, args), 400, 'invalid_dpop_proof');
    const ok = await exchange(ordersApi, args, { DPoP: await proof(key) });
    expect(ok.status).toBe(200);
    expect(ok.body.token_type).toBe('DPoP');
  });

  test('an unbound subject with a proof gives a bound token; an API requiring DPoP refuses an exchange without one', async () => {
    const subject = await userTokens();
    const bound = await exchange(ordersApi, { subject_token: subject.access_token }, { DPoP: await proof(otherKey) });
    expect(bound.status).toBe(200);
    expect((await verify(bound.body.access_token)).cnf).toEqual({ jkt: await thumbprintOf(otherKey) });
    const strict = await makeApiResource(t, { scopes: ['orders:read'] });
    await t.db('api_resources').where({ id: strict.id }).update({ dpop_bound_access_tokens: true });
    const caller = await exchanger([strict.identifier]);
    expectRefused(await exchange(caller, { subject_token: subject.access_token, resource: strict.identifier }), 400, 'invalid_dpop_proof');
  });
});

describe('sessions: the exchanged token lives under the subject’s session', () => {
  test('the subject’s session ending ends the exchanged token (and a chain of them); the caller revoking its token ends nothing else', async () => {
    const subject = await userTokens();
    const first = await exchange(ordersApi, { subject_token: subject.access_token });
    const stock = await exchanger([inventory.identifier]);
    const second = await exchange(stock, { subject_token: first.body.access_token });
    expect(second.status).toBe(200);

    // The orders API revokes its exchanged token: its own session ends (and the chain under it), the user's does not.
    const revoke = await request(t.app)
      .post('/api/oauth/revoke')
      .set('Authorization', ordersApi.auth)
      .type('form')
      .send({ token: first.body.access_token });
    expect(revoke.status).toBe(200);
    expect((await introspect(first.body.access_token)).active).toBe(false);
    expect((await introspect(second.body.access_token)).active).toBe(false);
    expect((await introspect(subject.access_token)).active).toBe(true);

    const again = await exchange(ordersApi, { subject_token: subject.access_token });
    expect((await introspect(again.body.access_token)).active).toBe(true);
    await request(t.app).post('/api/oauth/revoke').set('Authorization', web.auth).type('form').send({ token: subject.refresh_token });
    expect((await introspect(again.body.access_token)).active).toBe(false);
    // The web app cannot revoke the orders API's token (spec §4.3), and the orders API cannot revoke the user's.
    const foreign = await request(t.app)
      .post('/api/oauth/revoke')
      .set('Authorization', ordersApi.auth)
      .type('form')
      .send({ token: (await userTokens()).access_token });
    expect(foreign.body.error).toBe('unauthorized_client');
  });

  test('30 exchanges racing one revocation: no exchanged token outlives the subject’s session', async () => {
    const subject = await userTokens();
    const exchanges = Array.from({ length: 30 }, () => exchange(ordersApi, { subject_token: subject.access_token }));
    const revocation = request(t.app)
      .post('/api/oauth/revoke')
      .set('Authorization', web.auth)
      .type('form')
      .send({ token: subject.refresh_token });
    const [revoked, ...answers] = await Promise.all([revocation, ...exchanges]);
    expect(revoked.status).toBe(200);
    for (const res of answers) expect([200, 400]).toContain(res.status);
    for (const res of answers.filter((r) => r.status === 400)) expect(res.body.error).toBe('invalid_grant');
    for (const res of answers.filter((r) => r.status === 200)) expect((await introspect(res.body.access_token)).active).toBe(false);
    const live = await t
      .db('sessions')
      .whereNull('revoked_at')
      .whereIn('client_id', [ordersApi.clientId])
      .where({ user_id: subject.userId });
    expect(live).toEqual([]);
  });
});

test('discovery lists the grant type', async () => {
  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
    const res = await request(t.app).get(path);
    expect(res.status).toBe(200);
    expect(res.body.grant_types_supported).toContain(GRANT);
  }
});

test('fuzz: any parameters answer a 4xx in the OAuth error shape, never a 5xx', async () => {
  const subject = await userTokens();
  const value = fc.oneof(
    fc.constant(undefined),
    fc.string({ maxLength: 40 }),
    fc.constantFrom(
      AT,
      ID,
      'urn:ietf:params:oauth:token-type:jwt',
      subject.access_token,
      subject.refresh_token,
      inventory.identifier,
      orders.identifier,
      '',
      'orders:read stock:read',
      '\u0000',
      'a'.repeat(9000),
    ),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        subject_token: value,
        subject_token_type: value,
        actor_token: value,
        actor_token_type: value,
        requested_token_type: value,
        resource: value,
        audience: value,
        scope: value,
      }),
      async (form) => {
        const res = await token(ordersApi.auth, { grant_type: GRANT, ...form });
        expect(res.status === 200 || (res.status >= 400 && res.status < 500)).toBe(true);
        if (res.status !== 200) expect(typeof res.body.error).toBe('string');
        else expect(res.body.issued_token_type).toBe(AT);
      },
    ),
    { numRuns: 120 },
  );
});
