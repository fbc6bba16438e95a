import * as jose from 'jose';
import { makeApiResource, makeAppClient } from '../helpers/apps';
import { makeUser, signIn } from '../helpers/factories';
import { authorizeParams, authorizePath, createListeningTestApp, loadOAuth4WebApi, locationParams } from '../helpers/oauth';
import { loadEsm } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';

/**
 * Token exchange (RFC 8693, docs/token-exchange.md) driven by client libraries nobody here wrote, oauth4webapi (and
 * openid-client's genericGrantRequest for a delegation), over
 * real HTTP: its genericTokenEndpointRequest with the token-exchange grant type, configured from our discovery document (which
 * must list the grant), with and without DPoP (its own DPoP handle binds the subject token and the exchanged one to
 * the same key), and one refusal surfacing as the library's error.
 */
const oauth = loadOAuth4WebApi();
type AS = import('oauth4webapi', { with: { 'resolution-mode': 'import' } }).AuthorizationServer;

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AT = 'urn:ietf:params:oauth:token-type:access_token';

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let as: AS;
let orders: Awaited<ReturnType<typeof makeApiResource>>;
let inventory: Awaited<ReturnType<typeof makeApiResource>>;
let web: Awaited<ReturnType<typeof makeAppClient>>;
let ordersApi: Awaited<ReturnType<typeof makeAppClient>>;
const insecure = { [oauth.allowInsecureRequests]: true };

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
  as = await oauth.processDiscoveryResponse(new URL(baseUrl), await fetch(`${baseUrl}/api/oauth/.well-known/oauth-authorization-server`));
  orders = await makeApiResource(t, { scopes: ['orders:read', 'orders:write'] });
  inventory = await makeApiResource(t, { scopes: ['orders:read', 'stock:read'] });
  web = await makeAppClient(t, { allowedResources: [orders.identifier], grantTypes: ['authorization_code', 'refresh_token'] });
  ordersApi = await makeAppClient(t, { grantTypes: [GRANT], allowedResources: [inventory.identifier], redirectUris: [], scopes: [] });
});
afterAll(async () => {
  await stop();
});

/** A user signs in and approves `web` for the orders API; oauth4webapi redeems the code (with its DPoP handle if given). */
async function subjectToken(dpop?: ReturnType<typeof oauth.DPoP>) {
  const { agent } = await signIn(t, await makeUser(t));
  const { params, verifier, state } = authorizeParams(web, { scope: 'openid orders:read orders:write', resource: orders.identifier });
  let location: string = (await agent.get(authorizePath(params))).headers.location;
  if (new URL(location).pathname === '/consent') {
    const requestId = new URL(location).searchParams.get('request_id');
    location = (await agent.post('/api/oauth/authorize/approve').send({ request_id: requestId })).body.redirect_url;
  }
  expect(locationParams(location).get('code')).toBeTruthy();
  const client = { client_id: web.clientId };
  const callback = oauth.validateAuthResponse(as, client, new URL(location), state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.ClientSecretBasic(web.clientSecret!),
    callback,
    params.redirect_uri!,
    verifier,
    { ...insecure, additionalParameters: { resource: orders.identifier }, ...(dpop ? { DPoP: dpop } : {}) },
  );
  return oauth.processAuthorizationCodeResponse(as, client, response);
}

test('discovery lists the grant, and genericTokenEndpointRequest exchanges a user’s token for the inventory API', async () => {
  expect(as.grant_types_supported).toContain(GRANT);
  const subject = await subjectToken();
  const client = { client_id: ordersApi.clientId };
  const response = await oauth.genericTokenEndpointRequest(
    as,
    client,
    oauth.ClientSecretBasic(ordersApi.clientSecret!),
    GRANT,
    { subject_token: subject.access_token, subject_token_type: AT, resource: inventory.identifier },
    insecure,
  );
  const exchanged = await oauth.processGenericTokenEndpointResponse(as, client, response);
  expect(exchanged).toMatchObject({ token_type: 'bearer', issued_token_type: AT, scope: 'orders:read', expires_in: 3600 });
  expect(exchanged.refresh_token).toBeUndefined();
  // An API verifies it offline against the published keys, as docs/guide-api-rfc9068.md shows.
  const jwks = jose.createRemoteJWKSet(new URL(as.jwks_uri!));
  const { payload } = await jose.jwtVerify(exchanged.access_token, jwks, {
    issuer: as.issuer,
    audience: inventory.identifier,
    typ: 'at+jwt',
    currentDate: t.clock.now(),
  });
  expect(payload).toMatchObject({ client_id: ordersApi.clientId, scope: 'orders:read' });
});

test('with the library’s DPoP handle: a bound subject token exchanged with a proof of its key stays bound to it', async () => {
  const keyPair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify'])) as CryptoKeyPair;
  const dpop = oauth.DPoP({}, keyPair);
  const subject = await subjectToken(dpop);
  expect(subject.token_type).toBe('dpop');
  // The web app exchanges its own bound token (it holds the key); it must be allowed the grant and the API.
  await t
    .db('oauth_clients')
    .where({ client_id: web.clientId })
    .update({
      grant_types: JSON.stringify(['authorization_code', 'refresh_token', GRANT]),
      allowed_resources: JSON.stringify([orders.identifier, inventory.identifier]),
    });
  const client = { client_id: web.clientId };
  const auth = oauth.ClientSecretBasic(web.clientSecret!);
  const params = { subject_token: subject.access_token, subject_token_type: AT, resource: inventory.identifier };
  // Without the key's proof the bound token is refused (no laundering into a Bearer token).
  const bare = await oauth.genericTokenEndpointRequest(as, client, auth, GRANT, params, insecure);
  await expect(oauth.processGenericTokenEndpointResponse(as, client, bare)).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
  const response = await oauth.genericTokenEndpointRequest(as, client, auth, GRANT, params, { ...insecure, DPoP: dpop });
  const exchanged = await oauth.processGenericTokenEndpointResponse(as, client, response);
  expect(exchanged).toMatchObject({ token_type: 'dpop', issued_token_type: AT });
  expect((jose.decodeJwt(exchanged.access_token).cnf as { jkt: string }).jkt).toBe(await dpop.calculateThumbprint());
});

test('a wider scope surfaces as the library’s invalid_scope error', async () => {
  const subject = await subjectToken();
  const client = { client_id: ordersApi.clientId };
  const response = await oauth.genericTokenEndpointRequest(
    as,
    client,
    oauth.ClientSecretPost(ordersApi.clientSecret!),
    GRANT,
    { subject_token: subject.access_token, subject_token_type: AT, resource: inventory.identifier, scope: 'orders:read stock:read' },
    insecure,
  );
  await expect(oauth.processGenericTokenEndpointResponse(as, client, response)).rejects.toMatchObject({
    error: 'invalid_scope',
    status: 400,
  });
});

test('openid-client’s genericGrantRequest: a delegation with the client’s own client_credentials token as actor', async () => {
  const client = loadEsm<typeof import('openid-client', { with: { 'resolution-mode': 'import' } })>('openid-client');
  await t
    .db('oauth_clients')
    .where({ client_id: ordersApi.clientId })
    .update({ grant_types: JSON.stringify(['client_credentials', GRANT]) });
  const config = await client.discovery(new URL(baseUrl), ordersApi.clientId, ordersApi.clientSecret!, undefined, {
    execute: [client.allowInsecureRequests],
  });
  const actor = await client.clientCredentialsGrant(config, { resource: inventory.identifier });
  const subject = await subjectToken();
  const exchanged = await client.genericGrantRequest(config, GRANT, {
    subject_token: subject.access_token,
    subject_token_type: AT,
    actor_token: actor.access_token,
    actor_token_type: AT,
    audience: inventory.identifier,
  });
  expect(exchanged).toMatchObject({ issued_token_type: AT, token_type: 'bearer', scope: 'orders:read' });
  expect(jose.decodeJwt(exchanged.access_token)).toMatchObject({ act: { sub: ordersApi.clientId }, aud: inventory.identifier });
});
