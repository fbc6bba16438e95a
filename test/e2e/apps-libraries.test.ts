import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Express } from 'express';
import { DEBIAN_PYTHON } from '../helpers/ensure-authlib';
import { makeClient, makeUser } from '../helpers/factories';
import { makeApiResource, makeAppClient } from '../helpers/apps';
import { createListeningTestApp } from '../helpers/oauth';
import { loadEsm, signInAndApprove } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';
import { makeClientKey } from '../helpers/client-keys';
import { claimsOf, dpopProof } from '../helpers/dpop';

/**
 * Issue 20 with client libraries nobody here wrote, driven through the guides' own code (examples/apps, which
 * docs/guide-*.md show): a single-page app with oauth4webapi and a CLI with a loopback redirect (openid-client), both
 * public clients without a secret; client_credentials with openid-client and with Python Authlib; and an Express API
 * (examples/apps/resource-server.mjs) that accepts only RFC 9068 tokens for its own `aud`, verified with jose
 * against our JWKS. The device flow with a real browser is test/browser/device-browser.test.ts.
 */
const run = promisify(execFile);
const EXAMPLES = path.join(__dirname, '../../examples/apps');
type OpenIdClientModule = typeof import('openid-client', { with: { 'resolution-mode': 'import' } });
type Tokens = Awaited<ReturnType<OpenIdClientModule['clientCredentialsGrant']>>;
type AuthorizationServer = { issuer: string };
type SpaSettings = { clientId: string; redirectUri: string; resource?: string; scope?: string; insecure?: boolean };
type Keep = { codeVerifier: string; state: string; nonce: string };
type OAuthTokens = { access_token: string; refresh_token?: string };
/** The examples' exports, as the guides document them (plain JavaScript modules). */
interface Examples {
  spa: {
    discover(issuer: string, options: { insecure: boolean }): Promise<AuthorizationServer>;
    startSignIn(as: AuthorizationServer, settings: SpaSettings): Promise<{ url: URL; keep: Keep }>;
    finishSignIn(
      as: AuthorizationServer,
      settings: SpaSettings,
      callback: URL,
      keep: Keep,
    ): Promise<{ tokens: OAuthTokens; claims: Record<string, unknown> }>;
    refresh(as: AuthorizationServer, settings: SpaSettings, refreshToken: string): Promise<OAuthTokens>;
  };
  cli: {
    loginWithLoopback(options: {
      issuer: string;
      clientId: string;
      insecure: boolean;
      openBrowser: (url: URL) => Promise<void>;
    }): Promise<{ tokens: Tokens; redirectUri: string }>;
  };
  machine: {
    serviceToken(options: {
      issuer: string;
      clientId: string;
      clientSecret?: string;
      resource?: string;
      scope?: string;
      insecure: boolean;
    }): Promise<Tokens>;
  };
  resourceServer: { createApi(options: { issuer: string; audience: string; insecure: boolean }): Promise<Express> };
}
const spa = loadEsm<Examples['spa']>(path.join(EXAMPLES, 'spa.mjs'));
const cli = loadEsm<Examples['cli']>(path.join(EXAMPLES, 'cli-login.mjs'));
const machine = loadEsm<Examples['machine']>(path.join(EXAMPLES, 'machine.mjs'));
const resourceServer = loadEsm<Examples['resourceServer']>(path.join(EXAMPLES, 'resource-server.mjs'));

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let apiUrl: string;
let apiServer: Server;
let audience: string;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
  audience = (
    await makeApiResource(t, { identifier: 'https://invoices.example.test/', scopes: ['invoices:read', 'invoices:write'], ttlSeconds: 600 })
  ).identifier;
  const app = await resourceServer.createApi({ issuer: baseUrl, audience, insecure: true });
  apiServer = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  apiUrl = `http://127.0.0.1:${(apiServer.address() as { port: number }).port}`;
});
afterAll(async () => {
  apiServer?.closeAllConnections();
  await new Promise<void>((resolve) => (apiServer ? apiServer.close(() => resolve()) : resolve()));
  await stop();
});

const callApi = (accessToken: string) => fetch(`${apiUrl}/invoices`, { headers: { authorization: `Bearer ${accessToken}` } });

test('SPA (oauth4webapi, public client, PKCE, no secret): id_token validated, an RFC 9068 token the API accepts, refresh for the API', async () => {
  const user = await makeUser(t);
  const redirectUri = 'https://spa.example.test/callback';
  const client = await makeAppClient(t, {
    type: 'public',
    redirectUris: [redirectUri],
    scopes: ['openid', 'profile', 'email'],
    allowedResources: [audience],
  });
  const settings = { clientId: client.clientId, redirectUri, resource: audience, insecure: true };
  const as = await spa.discover(baseUrl, { insecure: true });
  const { url, keep } = await spa.startSignIn(as, { ...settings, scope: 'openid profile invoices:read' });
  const { callback } = await signInAndApprove(baseUrl, url, user);
  const { tokens, claims } = await spa.finishSignIn(as, settings, callback, keep);
  expect(claims).toMatchObject({ iss: baseUrl, sub: user.id, aud: client.clientId });
  const answer = await callApi(tokens.access_token);
  expect(answer.status).toBe(200);
  expect(await answer.json()).toMatchObject({ caller: user.id, client_id: client.clientId, machine: false });
  const refreshed = await spa.refresh(as, settings, tokens.refresh_token!);
  expect((await callApi(refreshed.access_token)).status).toBe(200);
});

test('CLI (openid-client, public client): loopback redirect on a port the system picked, registered without a port', async () => {
  const user = await makeUser(t);
  const client = await makeAppClient(t, { type: 'public', redirectUris: ['http://127.0.0.1/callback'] });
  const { tokens, redirectUri } = await cli.loginWithLoopback({
    issuer: baseUrl,
    clientId: client.clientId,
    insecure: true,
    // The person's browser: signs in and approves, then lands on the CLI's loopback listener.
    openBrowser: async (url: URL) => {
      const { callback } = await signInAndApprove(baseUrl, url, user);
      await fetch(callback);
    },
  });
  expect(redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  expect(redirectUri).not.toBe('http://127.0.0.1/callback');
  expect(tokens.claims()).toMatchObject({ sub: user.id, aud: client.clientId });
  expect(typeof tokens.refresh_token).toBe('string');
});

test('machine-to-machine with openid-client: client_credentials, an RFC 9068 token the API accepts; a spec token and a scope-less one are refused', async () => {
  const client = await makeAppClient(t, {
    grantTypes: ['client_credentials'],
    redirectUris: [],
    scopes: ['read'],
    allowedResources: [audience],
  });
  const tokens = await machine.serviceToken({
    issuer: baseUrl,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    resource: audience,
    insecure: true,
  });
  expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 600, scope: 'invoices:read invoices:write' });
  expect(tokens.refresh_token).toBeUndefined();
  const answer = await callApi(tokens.access_token);
  expect(answer.status).toBe(200);
  expect(await answer.json()).toMatchObject({ caller: client.clientId, client_id: client.clientId, machine: true });

  const narrow = await machine.serviceToken({
    issuer: baseUrl,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    resource: audience,
    scope: 'read',
    insecure: true,
  });
  expect((await callApi(narrow.access_token)).status).toBe(403);
  // The spec's HS256 token, an id_token and another API's token are not this API's.
  const user = await makeUser(t);
  const rp = await makeClient(t, { redirectUris: ['https://rp.example.test/cb'] });
  const other = await makeApiResource(t);
  const otherClient = await makeAppClient(t, {
    grantTypes: ['client_credentials'],
    redirectUris: [],
    allowedResources: [other.identifier],
  });
  const otherToken = await machine.serviceToken({
    issuer: baseUrl,
    clientId: otherClient.clientId,
    clientSecret: otherClient.clientSecret,
    insecure: true,
  });
  expect((await callApi(otherToken.access_token)).status).toBe(401);
  const config = loadEsm<OpenIdClientModule>('openid-client');
  const rpConfig = await config.discovery(new URL(baseUrl), rp.clientId, rp.clientSecret, undefined, {
    execute: [config.allowInsecureRequests],
  });
  const verifier = config.randomPKCECodeVerifier();
  const url = config.buildAuthorizationUrl(rpConfig, {
    redirect_uri: 'https://rp.example.test/cb',
    scope: 'openid',
    state: 's',
    code_challenge: await config.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const { callback } = await signInAndApprove(baseUrl, url, user);
  const spec = await config.authorizationCodeGrant(rpConfig, callback, { pkceCodeVerifier: verifier, expectedState: 's' });
  expect((await callApi(spec.access_token)).status).toBe(401);
  expect((await callApi(spec.id_token!)).status).toBe(401);
  expect((await callApi('garbage')).status).toBe(401);
});

test('machine-to-machine with Python Authlib: client_credentials with client_secret_basic and a resource', async () => {
  const client = await makeAppClient(t, {
    grantTypes: ['client_credentials'],
    redirectUris: [],
    scopes: ['read'],
    allowedResources: [audience],
  });
  const { stdout } = await run(DEBIAN_PYTHON, [path.join(__dirname, '../interop/authlib_m2m.py')], {
    env: {
      PATH: process.env.PATH,
      BASE_URL: baseUrl,
      CLIENT_ID: client.clientId,
      CLIENT_SECRET: client.clientSecret!,
      SCOPE: 'invoices:read',
      RESOURCE: audience,
    },
    timeout: 60_000,
  });
  const token = JSON.parse(stdout);
  expect(token).toMatchObject({ token_type: 'Bearer', scope: 'invoices:read', expires_in: 600 });
  expect(token).not.toHaveProperty('refresh_token');
  const answer = await callApi(token.access_token);
  expect(answer.status).toBe(200);
  expect(await answer.json()).toMatchObject({ caller: client.clientId, machine: true });
});

describe('the API with DPoP-bound tokens (RFC 9449; docs/guide-api-rfc9068.md)', () => {
  async function dpopMachine() {
    return makeAppClient(t, { grantTypes: ['client_credentials'], redirectUris: [], scopes: ['read'], allowedResources: [audience] });
  }

  test('openid-client with a DPoP handle: the bound token is accepted with its proofs (fetchProtectedResource)', async () => {
    const client = await dpopMachine();
    const oidc = loadEsm<OpenIdClientModule>('openid-client');
    const config = await oidc.discovery(new URL(baseUrl), client.clientId, client.clientSecret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const tokens = await oidc.clientCredentialsGrant(config, { resource: audience, scope: 'invoices:read' }, { DPoP });
    expect(tokens.token_type).toBe('dpop');
    expect(claimsOf(tokens.access_token).cnf).toEqual({ jkt: await DPoP.calculateThumbprint() });
    for (let i = 0; i < 2; i++) {
      // Each call carries a fresh proof (a new jti), so the second is accepted too.
      const answer = await oidc.fetchProtectedResource(
        config,
        tokens.access_token,
        new URL(`${apiUrl}/invoices`),
        'GET',
        undefined,
        undefined,
        {
          DPoP,
        },
      );
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ caller: client.clientId, machine: true, dpop: true });
    }
  });

  test('every refusal: as Bearer, no proof, no or a wrong ath, another key, URL or method, replayed, stale; DPoP for an unbound token', async () => {
    const client = await dpopMachine();
    const key = await makeClientKey('ES256');
    const other = await makeClientKey('ES256');
    const issued = await fetch(`${baseUrl}/api/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        dpop: await dpopProof(key, { htu: `${baseUrl}/api/oauth/token`, now: t.clock.now() }),
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: audience, scope: 'invoices:read' }),
    });
    const { access_token: at, token_type: type } = (await issued.json()) as { access_token: string; token_type: string };
    expect(type).toBe('DPoP');
    const invoices = `${apiUrl}/invoices`;
    const call = (authorization: string, proof?: string) =>
      fetch(invoices, { headers: { authorization, ...(proof ? { dpop: proof } : {}) } });
    const proof = (k = key, request: Partial<Parameters<typeof dpopProof>[1]> = {}, claims = {}) =>
      dpopProof(k, { htm: 'GET', htu: invoices, accessToken: at, ...request }, claims);
    const refused = async (res: Response, error: string) => {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(new RegExp(`^DPoP error="${error}"`));
      expect(((await res.json()) as { error: string }).error).toBe(error);
    };

    const good = await proof();
    expect((await call(`DPoP ${at}`, good)).status).toBe(200);
    await refused(await call(`DPoP ${at}`, good), 'invalid_dpop_proof'); // the same proof again
    await refused(await call(`Bearer ${at}`), 'invalid_token');
    await refused(await call(`Bearer ${at}`, await proof()), 'invalid_token');
    await refused(await call(`DPoP ${at}`), 'invalid_dpop_proof');
    await refused(await call(`DPoP ${at}`, await proof(key, { accessToken: undefined })), 'invalid_dpop_proof');
    await refused(await call(`DPoP ${at}`, await proof(key, { accessToken: `${at}x` })), 'invalid_dpop_proof');
    await refused(await call(`DPoP ${at}`, await proof(other)), 'invalid_dpop_proof');
    await refused(await call(`DPoP ${at}`, await proof(key, { htu: `${apiUrl}/other` })), 'invalid_dpop_proof');
    await refused(await call(`DPoP ${at}`, await proof(key, { htm: 'POST' })), 'invalid_dpop_proof');
    await refused(await call(`DPoP ${at}`, await proof(key, { now: new Date(Date.now() - 120_000) })), 'invalid_dpop_proof');
    await refused(await call(`DPoP ${at}`, await proof(key, {}, { typ: undefined, jti: undefined })), 'invalid_dpop_proof');
    await refused(await call(`DPoP ${at}`, 'not-a-jws'), 'invalid_dpop_proof');
    // The htu is compared without the query.
    expect((await fetch(`${invoices}?page=2`, { headers: { authorization: `DPoP ${at}`, dpop: await proof() } })).status).toBe(200);

    // An unbound token is a Bearer token: refused under the DPoP scheme, even with a proof.
    const plain = await machine.serviceToken({
      issuer: baseUrl,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      resource: audience,
      insecure: true,
    });
    expect((await call(`Bearer ${plain.access_token}`)).status).toBe(200);
    await refused(await call(`DPoP ${plain.access_token}`, await proof(key, { accessToken: plain.access_token })), 'invalid_token');
  });
});
