import express, { Router } from 'express';
import request from 'supertest';
import { z } from 'zod';
import { createAuthenticate } from '../../src/middleware/authenticate';
import { declareRouter, route } from '../../src/routes/route';
import { listAppRoutes } from '../../src/routes/route-table';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Every route is declared once (src/routes/route.ts): the OpenAPI document and the permission matrix are read back
 * from the declarations, so a route mounted any other way would be undocumented and untested.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('route declarations', () => {
  test('every route of the app under /api has a declaration', () => {
    const routes = listAppRoutes(t.app).filter((r) => r.path.startsWith('/api/'));
    expect(routes.length).toBeGreaterThan(50);
    const undeclared = routes.filter((r) => !r.decl).map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(undeclared).toEqual([]);
  });

  test('the walk finds a router mounted without declarations (so the check above can fail)', () => {
    const app = express();
    const plain = Router();
    plain.get('/widgets/:id', (_req, res) => void res.end());
    app.use('/api/extra', plain);
    expect(listAppRoutes(app)).toEqual([{ method: 'get', path: '/api/extra/widgets/:id', decl: undefined }]);
  });

  test('every declared /api route is in the OpenAPI document with its method, and nothing else is', async () => {
    const doc = (await request(t.app).get('/api/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    const declared = listAppRoutes(t.app)
      .filter((r) => r.decl && r.decl.document !== false)
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
    const deps = { ctx: t.ctx, authenticate: createAuthenticate(t.ctx) };
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
          ({ params, body }) => (params.n === 0 ? { n: params.n, firstName: body.firstName, leaked: 'x' } : { n: params.n + 1, firstName: body.firstName }),
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
