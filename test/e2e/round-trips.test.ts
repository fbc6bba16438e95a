import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pg from 'pg';
import request from 'supertest';
import { makeApiResource } from '../helpers/apps';
import { makeClient, makeSignedInUser } from '../helpers/factories';
import { basicAuth, issueOAuthTokens } from '../helpers/oauth';
import { makeClientKey, signAssertion } from '../helpers/client-keys';
import { HEALTH_REFRESH_AFTER_MS } from '../../src/services/health.service';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 33: the database round trips of the hot requests, counted (a count the machine's load cannot change). Every
 * statement a request sends to PostgreSQL is attributed to it through AsyncLocalStorage, so the live-settings poll
 * and other background work are not counted. The figures are the floor the bench's ceiling and peer set: one
 * statement for /api/auth/me (session, live user, roles and permissions), one for each refresh rotation (single use,
 * reuse detection and the revoked-session check included), none for client_credentials, discovery and /health
 * within its one-second probe cache.
 */
let t: TestApp;
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const requestStatements = new AsyncLocalStorage<string[]>();

beforeAll(async () => {
  t = await createTestApp();
  // As the server does at start (src/server.ts): live settings and the client cache listen for changes.
  t.ctx.settings.startSync({ connectionString: t.databaseUrl });
  t.ctx.clients.startSync({ connectionString: t.databaseUrl });
  const query = pg.Client.prototype.query;
  jest.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const sql = args[0] as string | { name?: string; text?: string };
    requestStatements.getStore()?.push(typeof sql === 'string' ? sql : (sql.name ?? sql.text ?? ''));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query);
  const deadline = Date.now() + 5000;
  while (!t.ctx.clients.active && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
});
afterAll(() => t.close());

/** The statements one request sent: its answer must be `status`. */
async function statementsOf(send: (app: Handler) => request.Test, status = 200): Promise<string[]> {
  let statements: string[] = [];
  const res = await send((req, res) =>
    requestStatements.run([], () => {
      statements = requestStatements.getStore() ?? [];
      t.app(req, res);
    }),
  );
  expect(res.status).toBe(status);
  return statements;
}

describe('database round trips per request', () => {
  test('GET /api/auth/me: one statement (session, live user, roles and permissions), with roles too', async () => {
    for (const roles of [[], ['super_admin']]) {
      const { bearer } = await makeSignedInUser(t, roles);
      const statements = await statementsOf((app) => request(app).get('/api/auth/me').set('Authorization', bearer));
      expect(statements).toEqual(['sso_load_principal_5']);
    }
  });

  test('a revoked session is refused by the same one statement', async () => {
    const { bearer, accessToken } = await makeSignedInUser(t);
    const sid = JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()).sid as string;
    await t.db('sessions').where({ id: sid }).update({ revoked_at: t.clock.now() });
    const statements = await statementsOf((app) => request(app).get('/api/auth/me').set('Authorization', bearer), 401);
    expect(statements).toEqual(['sso_load_principal_5']);
  });

  test('POST /api/auth/refresh-token: the rotation is one statement; a replay is refused', async () => {
    const { refreshToken } = await makeSignedInUser(t);
    let rotated = '';
    const statements = await statementsOf((app) =>
      request(app)
        .post('/api/auth/refresh-token')
        .send({ refreshToken })
        .expect((res) => (rotated = res.body.refreshToken)),
    );
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^sso_rotate_refresh/);
    expect(rotated).toMatch(/\S/);
    // Single use is kept: the successor works, the spent token (outside the grace window) does not.
    t.clock.advance(60);
    expect((await request(t.app).post('/api/auth/refresh-token').send({ refreshToken: rotated })).status).toBe(200);
    expect((await request(t.app).post('/api/auth/refresh-token').send({ refreshToken })).status).toBe(401);
  });

  test('the OAuth refresh grant (with an RS256 id_token): one statement, the client from the cache', async () => {
    const client = await makeClient(t, { scopes: ['openid', 'profile', 'email', 'offline_access'] });
    const user = await makeSignedInUser(t);
    const tokens = await issueOAuthTokens(t, user.agent, client, { scope: 'openid profile email offline_access' });
    const refresh = (app: Handler, token: string) =>
      request(app)
        .post('/api/oauth/token')
        .type('form')
        .set('Authorization', basicAuth(client.clientId, client.clientSecret))
        .send({ grant_type: 'refresh_token', refresh_token: token });
    // The first use reads the client into the instance's cache.
    const first = await refresh(t.app, tokens.refresh_token);
    expect(first.status).toBe(200);
    let body: Record<string, string> = {};
    const statements = await statementsOf((app) => refresh(app, first.body.refresh_token).expect((res) => (body = res.body)));
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^sso_rotate_refresh/);
    expect(body.id_token).toMatch(/^eyJ/);
    expect(body.refresh_token).not.toBe(first.body.refresh_token);
  });

  test('client_credentials with an API resource: no statement once the client is cached', async () => {
    const admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
    const resource = await makeApiResource(t, { scopes: ['invoices:read'] });
    const created = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin)
      .send({ name: 'Machine', grant_types: ['client_credentials'], redirect_uris: [], allowed_resources: [resource.identifier] });
    expect(created.status).toBe(201);
    const cc = (app: Handler) =>
      request(app)
        .post('/api/oauth/token')
        .type('form')
        .set('Authorization', basicAuth(created.body.client.client_id, created.body.client_secret))
        .send({ grant_type: 'client_credentials', resource: resource.identifier, scope: 'invoices:read' });
    // The admin write empties the cache when its transaction commits; the first request reads the client again.
    let cached = false;
    for (let i = 0; i < 20 && !cached; i++) cached = (await statementsOf(cc)).length === 0;
    expect(cached).toBe(true);
    expect(await statementsOf(cc)).toEqual([]);
  });

  test('client_credentials by private_key_jwt: one statement, the assertion spent; the client and its keys from the cache', async () => {
    const admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
    const key = await makeClientKey();
    const created = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin)
      .send({
        name: 'Machine (private_key_jwt)',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [key.publicJwk] },
      });
    expect(created.status).toBe(201);
    const clientId: string = created.body.client.client_id;
    const cc = async () => {
      const assertion = await signAssertion(key, { iss: clientId, sub: clientId, aud: `${t.ctx.config.baseUrl}/api/oauth/token` });
      return (app: Handler) =>
        request(app).post('/api/oauth/token').type('form').send({
          grant_type: 'client_credentials',
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: assertion,
        });
    };
    let cached = false;
    for (let i = 0; i < 20 && !cached; i++) cached = (await statementsOf(await cc())).length === 1;
    expect(cached).toBe(true);
    const statements = await statementsOf(await cc());
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/oauth_used_jtis|used_jti|spend/i);
  });

  test('discovery: no statement; /health: at most one a second', async () => {
    expect(await statementsOf((app) => request(app).get('/.well-known/openid-configuration'))).toEqual([]);
    expect(await statementsOf((app) => request(app).get('/api/oauth/.well-known/oauth-authorization-server'))).toEqual([]);
    // The first /health of this app probes; the next reuses the result. Past HEALTH_REFRESH_AFTER_MS the next probe
    // starts in the background of the request that finds the result that old (and is counted against it): on a loaded
    // machine the second request can come that late. The probe started after `t0`, so its age when the second request
    // read it is under the time to the second's answer: below the refresh age, no statement at all; beyond it, one.
    const t0 = performance.now();
    expect(await statementsOf((app) => request(app).get('/health'))).toEqual(['select 1']);
    const second = await statementsOf((app) => request(app).get('/health'));
    if (performance.now() - t0 < HEALTH_REFRESH_AFTER_MS) expect(second).toEqual([]);
    else expect([[], ['select 1']]).toContainEqual(second);
  });
});
