import { createHash, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import vm from 'node:vm';
import express from 'express';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { loadEsm } from './oidc';
import type { TestApp } from './test-app';

/**
 * Upstream identity providers for the federation tests (CONTRACT §16), on 127.0.0.1:
 * - a real OpenID provider, node-oidc-provider 9 (ESM, loaded past jest like openid-client), with its own accounts;
 *   its interaction signs in whichever account the test chose with `signInAs` and grants the requested scopes;
 * - a GitHub-shaped OAuth 2.0 server (authorize, access_token with PKCE, /user, /user/emails) in Express.
 */

export interface UpstreamAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  name?: string;
}

export interface UpstreamOidc {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, UpstreamAccount>;
  /** The account the next interaction signs in. */
  signInAs(sub: string): void;
  stop(): Promise<void>;
}

type ProviderCtor = new (
  issuer: string,
  configuration: Record<string, unknown>,
) => {
  callback(): (req: http.IncomingMessage, res: http.ServerResponse) => void;
  interactionDetails(
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<{
    prompt: { name: string; details: Record<string, unknown> };
    params: Record<string, unknown>;
    grantId?: string;
    session?: { accountId?: string };
  }>;
  interactionFinished(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    result: Record<string, unknown>,
    options?: Record<string, unknown>,
  ): Promise<void>;
  Grant: new (args: { accountId: string; clientId: string }) => { addOIDCScope(scope: string): void; save(): Promise<string> };
  on(event: string, listener: (...args: unknown[]) => void): void;
};

const mainJsonParse = vm.runInThisContext('JSON.parse') as (text: string) => unknown;

/** A copy of plain data made by Node's own JSON.parse (objects with the main realm's prototype). */
function mainRealm<T>(value: T): T {
  return mainJsonParse(JSON.stringify(value)) as T;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** node-oidc-provider with one confidential client whose redirect URIs are the given callbacks. */
export async function startUpstreamOidc(redirectUris: string[], options: { issuerSuffix?: string } = {}): Promise<UpstreamOidc> {
  const Provider = loadEsm<{ default: ProviderCtor }>('oidc-provider').default;
  const server = http.createServer();
  const port = await listen(server);
  const issuer = `http://127.0.0.1:${port}${options.issuerSuffix ?? ''}`;
  const clientId = 'service-sso';
  const clientSecret = randomBytes(24).toString('hex');
  const accounts = new Map<string, UpstreamAccount>();
  let next: string | undefined;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  // oidc-provider tells plain objects by their prototype: its configuration is built in Node's own realm, not jest's.
  const configuration = mainRealm({
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'upstream', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name'] },
    features: { devInteractions: { enabled: false } },
    interactions: {},
  }) as unknown as Record<string, Record<string, unknown>>;
  configuration.interactions!.url = (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`;
  (configuration as Record<string, unknown>).findAccount = async (_ctx: unknown, sub: string) => {
    const account = accounts.get(sub);
    return account ? { accountId: sub, claims: async () => mainRealm(account) } : undefined;
  };
  const provider = new Provider(issuer, configuration);
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      void (async () => {
        const details = await provider.interactionDetails(req, res);
        if (details.prompt.name === 'login') {
          if (!next) throw new Error('upstream: no account chosen (signInAs)');
          await provider.interactionFinished(req, res, { login: { accountId: next } }, { mergeWithLastSubmission: false });
          return;
        }
        const grant = new provider.Grant({ accountId: details.session!.accountId!, clientId });
        grant.addOIDCScope(String(details.params.scope));
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
      })().catch((err: Error) => {
        res.statusCode = 500;
        res.end(err.message);
      });
      return;
    }
    callback(req, res);
  });
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    signInAs: (sub) => {
      next = sub;
    },
    stop: () => close(server),
  };
}

export interface FakeGitHub {
  baseUrl: string;
  apiBaseUrl: string;
  clientId: string;
  clientSecret: string;
  users: Map<
    string,
    { id: number; login: string; name: string | null; emails: Array<{ email: string; primary: boolean; verified: boolean }> }
  >;
  signInAs(login: string): void;
  stop(): Promise<void>;
}

/** A GitHub-shaped OAuth server: the authorize step signs in the chosen user at once; PKCE S256 is checked. */
export async function startFakeGitHub(): Promise<FakeGitHub> {
  const app = express();
  app.use(express.urlencoded({ extended: false }));
  const clientId = 'Iv1.fakegithub';
  const clientSecret = randomBytes(20).toString('hex');
  const users: FakeGitHub['users'] = new Map();
  const codes = new Map<string, { login: string; challenge: string; redirectUri: string }>();
  const tokens = new Map<string, string>();
  let next: string | undefined;
  app.get('/login/oauth/authorize', (req, res) => {
    const q = req.query as Record<string, string>;
    if (q.client_id !== clientId || q.code_challenge_method !== 'S256' || !q.code_challenge || !next)
      return res.status(400).send('bad request');
    const code = randomBytes(10).toString('hex');
    codes.set(code, { login: next, challenge: q.code_challenge, redirectUri: q.redirect_uri! });
    const target = new URL(q.redirect_uri!);
    target.searchParams.set('code', code);
    target.searchParams.set('state', q.state!);
    res.redirect(302, target.href);
  });
  app.post('/login/oauth/access_token', (req, res) => {
    const body = req.body as Record<string, string>;
    const entry = codes.get(body.code ?? '');
    codes.delete(body.code ?? '');
    const verified =
      entry &&
      createHash('sha256')
        .update(body.code_verifier ?? '')
        .digest('base64url') === entry.challenge;
    // GitHub answers errors with 200 and an error body.
    if (
      body.client_id !== clientId ||
      body.client_secret !== clientSecret ||
      !entry ||
      !verified ||
      body.redirect_uri !== entry.redirectUri
    ) {
      return res.json({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
    }
    const token = `gho_${randomBytes(16).toString('hex')}`;
    tokens.set(token, entry.login);
    res.json({ access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
  });
  const userOf = (req: express.Request) => tokens.get((req.get('authorization') ?? '').replace(/^Bearer /, ''));
  app.get('/api/v3/user', (req, res) => {
    const login = userOf(req);
    const user = login ? users.get(login) : undefined;
    if (!user) return res.status(401).json({ message: 'Bad credentials' });
    res.json({ id: user.id, login: user.login, name: user.name });
  });
  app.get('/api/v3/user/emails', (req, res) => {
    const login = userOf(req);
    const user = login ? users.get(login) : undefined;
    if (!user) return res.status(401).json({ message: 'Bad credentials' });
    res.json(user.emails.map((e) => ({ ...e, visibility: e.primary ? 'private' : null })));
  });
  const server = http.createServer(app);
  const port = await listen(server);
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    apiBaseUrl: `${baseUrl}/api/v3`,
    clientId,
    clientSecret,
    users,
    signInAs: (login) => {
      next = login;
    },
    stop: () => close(server),
  };
}

/** Follows the provider's redirects (its own cookies kept) until it sends the browser back elsewhere. */
export async function throughUpstream(authorizationUrl: string): Promise<URL> {
  let url = new URL(authorizationUrl);
  const upstream = request.agent(url.origin);
  for (let i = 0; i < 12; i++) {
    const res = await upstream.get(url.pathname + url.search);
    if (res.status < 300 || res.status >= 400) throw new Error(`upstream answered ${res.status} at ${url.pathname}: ${res.text}`);
    const next = new URL(res.headers.location, url);
    if (next.origin !== url.origin) return next;
    url = next;
  }
  throw new Error('upstream redirected too often');
}

/** Start at our server, through the provider, and back: the callback's path and query on our server. */
export async function startAndAuthorize(
  browser: TestAgent,
  slug: string,
  query: Record<string, string> = {},
): Promise<{ callbackPath: string; start: request.Response }> {
  const qs = new URLSearchParams(query).toString();
  const start = await browser.get(`/api/auth/idp/${slug}/start${qs ? `?${qs}` : ''}`);
  if (start.status !== 302) throw new Error(`start answered ${start.status}: ${start.text}`);
  const back = await throughUpstream(start.headers.location);
  return { callbackPath: back.pathname + back.search, start };
}

/** Adds an identity provider through the admin API. */
export async function addProvider(t: TestApp, adminToken: string, body: Record<string, unknown>): Promise<{ id: string; slug: string }> {
  const res = await request(t.app).post('/api/admin/identity-providers').set('Authorization', `Bearer ${adminToken}`).send(body);
  if (res.status !== 201) throw new Error(`create provider answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.provider;
}

/** A github provider row inserted directly (no request to any provider). */
export async function makeIdentityProvider(t: TestApp): Promise<string> {
  const id = randomUUID();
  await t.db('identity_providers').insert({
    id,
    slug: `gh-${randomBytes(4).toString('hex')}`,
    name: 'GitHub',
    type: 'github',
    base_url: 'https://github.com',
    api_base_url: 'https://api.github.com',
    client_id: 'client',
    client_secret_sealed: t.ctx.sealer.seal('secret', `idp-client-secret:${id}`),
    scopes: 'read:user user:email',
  });
  return id;
}
