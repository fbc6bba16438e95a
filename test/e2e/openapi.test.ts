import request from 'supertest';
import { SETTINGS } from '../../src/declarations/settings';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('API description', () => {
  test('GET /api/openapi.json is an OpenAPI 3.1 document with request schemas', async () => {
    const res = await request(t.app).get('/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.servers).toEqual([{ url: 'http://sso.test' }]);
    const register = res.body.paths['/api/auth/register'].post;
    expect(register.requestBody.content['application/json'].schema.properties).toHaveProperty('password');
    expect(res.body.paths['/api/oauth/token'].post.requestBody.content).toHaveProperty('application/x-www-form-urlencoded');
  });

  test('the settings operations describe every declared setting (one declaration, CONTRACT §18)', async () => {
    const doc = (await request(t.app).get('/api/openapi.json')).body;
    const names = SETTINGS.map((s) => s.name).sort();
    const ref: string = doc.paths['/api/admin/settings'].patch.requestBody.content['application/json'].schema.$ref;
    const patch = doc.components.schemas[ref.replace('#/components/schemas/', '')];
    expect(Object.keys(patch.properties).sort()).toEqual(names);
    expect(patch.properties.invitation_ttl_hours).toMatchObject({ type: 'integer', minimum: 1, maximum: 720 });
    expect(patch.properties.registration).toMatchObject({ enum: ['open', 'closed'] });
    expect(doc.paths['/api/admin/settings'].get.responses['200']).toBeDefined();
  });

  test("the reads of a user's page and the list's keyset paging are documented with their answers", async () => {
    const doc = (await request(t.app).get('/api/openapi.json')).body;
    for (const read of ['sessions', 'mfa', 'apps', 'activity', 'identities']) {
      const op = doc.paths[`/api/users/{userId}/${read}`].get;
      expect(op.responses['200']).toBeDefined();
      expect(op.responses['404']).toBeDefined();
      expect(op.parameters.map((p: { name: string }) => p.name)).toContain('userId');
    }
    const activityQuery = doc.paths['/api/users/{userId}/activity'].get.parameters.map((p: { name: string }) => p.name);
    expect(activityQuery).toEqual(expect.arrayContaining(['cursor', 'limit']));
    const list = doc.paths['/api/users'].get;
    const names = list.parameters.map((p: { name: string }) => p.name);
    expect(names).toEqual(expect.arrayContaining(['search', 'status', 'tier', 'page', 'limit', 'paging', 'cursor', 'before']));
    expect(JSON.stringify(list.responses['200'])).toContain('next_cursor');
    expect(doc.paths['/api/users/count'].get.responses['200']).toBeDefined();
  });

  test('every documented operation is routed (none answers "route not found")', async () => {
    const doc = (await request(t.app).get('/api/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const unrouted: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      const concrete = path
        .replace('{userId}', '00000000-0000-4000-8000-000000000000')
        .replace('{roleId}', '00000000-0000-4000-8000-000000000000')
        .replace('{sessionId}', '00000000-0000-4000-8000-000000000000')
        .replace('{clientId}', 'client_unknown');
      for (const method of Object.keys(operations)) {
        const res = await (request(t.app) as unknown as Record<string, (p: string) => request.Test>)[method]!(concrete);
        if (res.status === 404 && typeof res.body?.message === 'string' && res.body.message.startsWith('Route ')) {
          unrouted.push(`${method.toUpperCase()} ${path}`);
        }
      }
    }
    expect(unrouted).toEqual([]);
  });

  test('/api/docs is a browsable page whose assets are served locally', async () => {
    const page = await request(t.app).get('/api/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('/api/docs/assets/swagger-ui-bundle.js');
    const bundle = await request(t.app).get('/api/docs/assets/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    const init = await request(t.app).get('/api/docs/init.js');
    expect(init.text).toContain('/api/openapi.json');
  });
});
