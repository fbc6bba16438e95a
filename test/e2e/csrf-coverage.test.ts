import { listDeclaredRoutes } from '../../src/routes/route-table';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Every state-changing route outside the JSON API (the hosted pages and the console) checks the CSRF pair and the
 * post's origin (`csrf` in its declaration, src/middleware/csrf.ts): a route added or refactored without it fails here.
 * The JSON API is covered by the origin check of its scope instead. The exceptions receive posts from other sites by
 * design (SAML's HTTP-POST binding: a service provider's page posts the message) and act only on what the message
 * proves (its signature, a registered ACS URL) and on SameSite=Lax cookies, which a cross-site post never carries.
 */
const CROSS_SITE_BY_DESIGN = new Set(['post /saml/sso', 'post /saml/slo']);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

test('every non-GET page and console route declares the CSRF check', () => {
  const routes = listDeclaredRoutes(t.app).filter((r) => r.method !== 'get' && !r.path.startsWith('/api/') && !r.path.startsWith('/scim/'));
  expect(routes.length).toBeGreaterThan(50);
  const unchecked = routes.filter((r) => !r.decl.csrf).map((r) => `${r.method} ${r.path}`);
  expect(unchecked.sort()).toEqual([...CROSS_SITE_BY_DESIGN].sort());
});
