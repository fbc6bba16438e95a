import express, { Router } from 'express';
import request from 'supertest';
import { z } from 'zod';
import { createAuthenticate } from '../../src/middleware/authenticate';
import { declareRouter, route } from '../../src/routes/route';
import { createScopes } from '../../src/app';
import { listDeclaredRoutes } from '../../src/routes/route-table';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Every route is declared once (src/routes/route.ts) and mounted by a scope (src/routes/scope.ts), which records it in
 * the app's route table: the OpenAPI document and the permission matrix read that table, so a scope refuses a router
 * mounted any other way (it would be undocumented and untested).
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('route declarations', () => {
  test('the route table lists the declared routes, with their full paths and what their scope added', () => {
    const routes = listDeclaredRoutes(t.app);
    expect(routes.filter((r) => r.path.startsWith('/api/')).length).toBeGreaterThan(50);
    const find = (method: string, path: string) => routes.find((r) => r.method === method && r.path === path)?.decl;
    expect(find('get', '/api/users/:userId')?.secondFactorForAdmins).toBe(true);
    expect(find('get', '/api/admin/audit-events')?.secondFactorForAdmins).toBe(true);
    expect(find('post', '/api/oauth/token')?.dialect).toBe('oauth');
    expect(find('get', '/api/auth/me')?.dialect).toBeUndefined();
    expect(find('get', '/health')).toBeDefined();
  });

  test('CONTRACT §13: registration answers in the OAuth dialect with its own per-IP budget; token minting is an admin route', async () => {
    const routes = listDeclaredRoutes(t.app);
    const find = (method: string, path: string) => routes.find((r) => r.method === method && r.path === path)?.decl;
    for (const method of ['get', 'put', 'delete']) expect(find(method, '/api/oauth/register/:clientId')?.dialect).toBe('oauth');
    expect(find('post', '/api/oauth/register')).toMatchObject({ dialect: 'oauth', rateLimit: 'registration', noStore: true });
    expect(find('post', '/api/admin/registration-tokens')).toMatchObject({
      permission: 'oauth_clients:write',
      secondFactorForAdmins: true,
    });
    expect(find('get', '/api/admin/registration-tokens')).toMatchObject({ permission: 'oauth_clients:read', secondFactorForAdmins: true });
    expect(find('delete', '/api/admin/registration-tokens/:tokenId')).toMatchObject({ permission: 'oauth_clients:write' });
    const doc = (await request(t.app).get('/api/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/oauth/register'].post.responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '404', '429']),
    );
    expect(Object.keys(doc.paths['/api/admin/registration-tokens'].post.responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '429']),
    );
    expect(doc.paths['/api/oauth/register/{clientId}'].delete.responses).toHaveProperty('204');
  });

  test('a scope refuses a router that was not built from declarations with its deps', () => {
    const app = express();
    const { scopes } = createScopes(app, { ctx: t.ctx });
    const plain = Router();
    plain.get('/widgets/:id', (_req, res) => void res.end());
    expect(() => scopes.api.mount('/extra', () => plain)).toThrow(/only routers built by declareRouter/);
    // Built from declarations but without the scope's deps: refused too (it would miss the scope's steps).
    const deps = { ctx: t.ctx, serviceContext: t.ctx, authenticate: createAuthenticate(t.ctx) };
    const detached = declareRouter(deps, [route({ method: 'get', path: '/w', summary: 'w', auth: 'none' }, () => ({}))]);
    expect(() => scopes.api.mount('/extra', () => detached)).toThrow(/only routers built by declareRouter/);
  });

  test('every declared /api route is in the OpenAPI document with its method, and nothing else is', async () => {
    const doc = (await request(t.app).get('/api/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    const declared = listDeclaredRoutes(t.app)
      .filter((r) => r.decl.document !== false)
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    expect(documented.sort()).toEqual([...new Set(declared)].sort());
    expect(declared.filter((d) => d.includes(' /api/')).length).toBeGreaterThan(50);
  });

  test('a guard implies 401 and 403 in the document, and security schemes come from auth', async () => {
    const doc = (await request(t.app).get('/api/openapi.json')).body;
    const op = doc.paths['/api/users/{userId}'].put;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '409', '429']));
    expect(op.description).toContain('users:write');
    expect(op.security).toEqual([{ bearer: [] }, { cookie: [] }]);
    expect(doc.paths['/api/oauth/token'].post.security).toEqual([{ clientBasic: [] }, {}]);
    expect(doc.paths['/api/auth/register'].post.security).toEqual([]);
    expect(doc.paths['/api/oauth/token'].post.responses.default.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/OAuthError',
    });
    for (const name of ['Error', 'OAuthError', 'User', 'AuthResult', 'UserDetail', 'Role', 'OAuthClient', 'TokenResponse']) {
      expect(doc.components.schemas).toHaveProperty(name);
    }
  });

  test('a response outside its declared schema fails in tests (500), and handlers get parsed, typed input', async () => {
    const app = express();
    app.use(express.json());
    const deps = { ctx: t.ctx, serviceContext: t.ctx, authenticate: createAuthenticate(t.ctx) };
    app.use(
      declareRouter(deps, [
        route(
          {
            method: 'post',
            path: '/echo/:n',
            summary: 'echo',
            auth: 'none',
            params: z.object({ n: z.coerce.number().int() }),
            body: z.object({ first_name: z.string() }).transform((b) => ({ firstName: b.first_name })),
            response: { description: 'echo', schema: z.strictObject({ n: z.number(), firstName: z.string() }) },
          },
          ({ params, body }) =>
            params.n === 0 ? { n: params.n, firstName: body.firstName, leaked: 'x' } : { n: params.n + 1, firstName: body.firstName },
        ),
      ]),
    );
    app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(err.message.includes('validation') ? 400 : 500).json({ message: err.message });
    });
    const ok = await request(app).post('/echo/41').send({ first_name: 'Ada' });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ n: 42, firstName: 'Ada' });
    const leaked = await request(app).post('/echo/0').send({ first_name: 'Ada' });
    expect(leaked.status).toBe(500);
    expect(leaked.body.message).toMatch(/declared response schema/);
  });
});
