import { makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { makeRole } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The console fits the admin who opens it (docs/console.md): every admin-tier role lands on a page it may see, and
 * the navigation lists exactly the sections whose page that admin may open (nothing refused, nothing missing).
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const SECTIONS = [
  '/admin',
  '/admin/users',
  '/admin/roles',
  '/admin/applications',
  '/admin/api-resources',
  '/admin/identity-providers',
  '/admin/saml-apps',
  '/admin/webhooks',
  '/admin/scim',
  '/admin/audit',
  '/admin/signing-keys',
  '/admin/settings',
];

/** The hrefs of the console navigation of a page. */
const navOf = (page: string): string[] => {
  const nav = /<nav class="main"[^>]*>([\s\S]*?)<\/nav>/.exec(page)?.[1] ?? '';
  return [...nav.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!);
};

async function walk(agent: Awaited<ReturnType<typeof signIn>>['agent']) {
  const open: string[] = [];
  for (const path of SECTIONS) {
    const res = await agent.get(path);
    // The front door sends who may not see the overview on (303); every other section opens (200) or is refused (403).
    expect([path, path === '/admin' ? [200, 303] : [200, 403]]).toEqual([path, expect.arrayContaining([res.status])]);
    if (res.status === 200) open.push(path);
  }
  const landing = await agent.get('/admin');
  const target = landing.status === 303 ? (landing.headers.location as string) : '/admin';
  const page = await agent.get(target);
  return { open, landing, target, page };
}

test.each([
  ['super_admin', '/admin', 12],
  ['admin', '/admin', 11], // all but identity providers (system:manage_identity_providers)
  ['manager', '/admin/users', 1],
])('a %s lands on %s, a page it may see, under a navigation of the sections it may open', async (role, expected, count) => {
  const { agent } = await makeSignedInUser(t, [role]);
  const { open, landing, target, page } = await walk(agent);
  expect(target).toBe(expected);
  expect(landing.status).toBe(expected === '/admin' ? 200 : 303);
  expect(page.status).toBe(200);
  expect(page.text).not.toContain('Not allowed');
  expect(navOf(page.text)).toEqual(open);
  expect(open).toHaveLength(count);
});

test('a manager who also holds oauth_clients:read through another role sees Applications, API resources and SAML too', async () => {
  const role = await makeRole(t, { permissions: ['oauth_clients:read'] });
  const user = await makeUser(t, { roles: ['manager'] });
  await t.db('user_roles').insert({ user_id: user.id, role_id: role.id });
  const { agent } = await signIn(t, user);
  const { open, page, target } = await walk(agent);
  expect(target).toBe('/admin/users');
  expect(open).toEqual(['/admin/users', '/admin/applications', '/admin/api-resources', '/admin/saml-apps']);
  expect(navOf(page.text)).toEqual(open);
});

test('the navigation is the same on every page of a section, and the German console lands the same way', async () => {
  const { agent } = await makeSignedInUser(t, ['manager']);
  const res = await agent.get('/admin').set('Accept-Language', 'de');
  expect(res.status).toBe(303);
  expect(res.headers.location).toBe('/admin/users');
  const users = await agent.get('/admin/users').set('Accept-Language', 'de');
  expect(users.text).toContain('Benutzer');
  expect(navOf(users.text)).toEqual(['/admin/users']);
  // A page it may not open is still refused, with the navigation it may use.
  const refused = await agent.get('/admin/applications');
  expect(refused.status).toBe(403);
  expect(navOf(refused.text)).toEqual(['/admin/users']);
});
