import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeSignedInUser, makeUser } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { makeRole } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The console's import page (docs/passwords.md, docs/console.md), built from POST /api/admin/users/import: a dry run
 * (the default) creates nothing and offers the same content again; a real import creates the accounts; a malformed or
 * refused payload shows the error summary and the per-row report, keeps the content and changes nothing; a reader
 * without users:write is refused like by the API; the export link works with the console's session.
 */
let t: TestApp;
let admin: { agent: TestAgent; csrf: string; bearer: string };

beforeAll(async () => {
  t = await createTestApp();
  const s = await makeSignedInUser(t, ['super_admin']);
  admin = { agent: s.agent, bearer: s.bearer, csrf: await csrfFrom(s.agent, '/admin/users') };
});
afterAll(async () => {
  await t?.close();
});

const post = (agent: TestAgent, csrf: string, form: Record<string, string>) =>
  agent
    .post('/admin/users/import')
    .type('form')
    .send({ csrf, ...form });
const countOf = async (emails: string[]) => Number((await t.db('users').whereIn('email', emails).count({ n: '*' }))[0]!.n);
const BCRYPT = '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

test('the page: linked from the users list, dry run on by default, an export link that works with the session', async () => {
  expect((await admin.agent.get('/admin/users')).text).toContain('href="/admin/users/import"');
  const page = await admin.agent.get('/admin/users/import');
  expect(page.status).toBe(200);
  expect(page.text).toContain('<h1>Import accounts</h1>');
  expect(page.text).toMatch(/<input[^>]*name="dry_run"[^>]*checked/);
  expect(page.text).toContain('href="/api/admin/users/export"');
  const exported = await admin.agent.get('/api/admin/users/export');
  expect(exported.status).toBe(200);
  expect(exported.headers['content-type']).toContain('application/x-ndjson');
  expect(exported.text).not.toContain('password');
  const de = await admin.agent.get('/admin/users/import').set('Accept-Language', 'de');
  expect(de.text).toContain('Konten importieren');
  expect(de.text).toContain('Probelauf');
});

test('a dry run (JSON) imports nothing and offers the same content; the real import creates the accounts', async () => {
  const emails = ['imp-a@example.com', 'imp-b@example.com'];
  const content = JSON.stringify([
    { email: emails[0], first_name: 'Ada', last_name: 'Import', password_hash: BCRYPT },
    { email: emails[1], first_name: 'Ben', last_name: 'Import', roles: [] },
  ]);
  const dry = await post(admin.agent, admin.csrf, { format: 'json', content, dry_run: 'true' });
  expect(dry.status).toBe(200);
  expect(dry.text).toContain('All 2 row(s) passed the checks; nothing was created.');
  expect(dry.text).toContain('imp-a@example.com'); // the content, ready to import for real
  expect(dry.text).not.toMatch(/<input[^>]*name="dry_run"[^>]*checked/);
  expect(await countOf(emails)).toBe(0);

  const real = await post(admin.agent, admin.csrf, { format: 'json', content });
  expect(real.status).toBe(303);
  expect(real.headers.location).toBe('/admin/users');
  expect((await admin.agent.get('/admin/users')).text).toContain('2 account(s) imported.');
  const rows = await t.db('users').whereIn('email', emails).orderBy('email');
  expect(rows.map((u: { email: string; first_name: string }) => [u.email, u.first_name])).toEqual([
    [emails[0], 'Ada'],
    [emails[1], 'Ben'],
  ]);
});

test('CSV: a dry run, then the import', async () => {
  const content = 'email,first_name,last_name\nimp-csv@example.com,Cleo,Csv\n';
  const dry = await post(admin.agent, admin.csrf, { format: 'csv', content, dry_run: 'true' });
  expect(dry.status).toBe(200);
  expect(dry.text).toContain('All 1 row(s) passed');
  expect(await countOf(['imp-csv@example.com'])).toBe(0);
  expect((await post(admin.agent, admin.csrf, { format: 'csv', content })).status).toBe(303);
  expect(await countOf(['imp-csv@example.com'])).toBe(1);
});

test('refused rows: the error summary and the per-row report, the content kept, nothing created (en and de)', async () => {
  const taken = await makeUser(t, { email: 'imp-taken@example.com' });
  const content = JSON.stringify([
    { email: 'imp-ok@example.com', first_name: 'Ok', last_name: 'Row' },
    { email: taken.email, first_name: 'Dup', last_name: 'Row' },
    { email: 'not-an-address', first_name: 'Bad', last_name: 'Row' },
  ]);
  for (const dryRun of ['true', '']) {
    const res = await post(admin.agent, admin.csrf, { format: 'json', content, dry_run: dryRun });
    expect(res.status).toBe(400);
    expect(res.text).toContain('error-summary');
    expect(res.text).toContain('Problems by row (nothing was created)');
    expect(res.text).toContain('an account with this address already exists');
    expect(res.text).toMatch(/<td[^>]*>\s*3\s*<\/td>\s*<td[^>]*>\s*not-an-address/);
    expect(res.text).toContain('imp-ok@example.com'); // the content kept
  }
  expect(await countOf(['imp-ok@example.com'])).toBe(0);
  const de = await post(admin.agent, admin.csrf, { format: 'json', content, dry_run: 'true' }).set('Accept-Language', 'de');
  expect(de.status).toBe(400);
  expect(de.text).toContain('Probleme nach Zeile');
});

test('a malformed payload: the error summary beside the field, the values kept, nothing changes', async () => {
  const before = Number((await t.db('users').count({ n: '*' }))[0]!.n);
  const notJson = await post(admin.agent, admin.csrf, { format: 'json', content: '[{"email": "imp-x@example.com",', dry_run: 'true' });
  expect(notJson.status).toBe(400);
  expect(notJson.text).toContain('error-summary');
  expect(notJson.text).toContain('This is not valid JSON.');
  expect(notJson.text).toContain('[{&quot;email&quot;: &quot;imp-x@example.com&quot;,');
  const object = await post(admin.agent, admin.csrf, { format: 'json', content: '{"email": "imp-y@example.com"}' });
  expect(object.status).toBe(400);
  expect(object.text).toContain('The JSON must be an array of accounts.');
  const empty = await post(admin.agent, admin.csrf, { format: 'json', content: '' });
  expect(empty.status).toBe(400);
  expect(empty.text).toContain('Paste the accounts to import.');
  const csv = await post(admin.agent, admin.csrf, { format: 'csv', content: 'email,first_name\n"unterminated,x\n' });
  expect(csv.status).toBe(400);
  expect(csv.text).toContain('error-summary');
  expect(csv.text).toMatch(/<select[^>]*name="format"[\s\S]*<option value="csv" selected/);
  expect(Number((await t.db('users').count({ n: '*' }))[0]!.n)).toBe(before);
});

test('a reader without users:write is refused the page and the import, as by the API; the export needs users:read', async () => {
  const role = await makeRole(t, { name: `import-readers-${Date.now()}`, permissions: ['users:read'] });
  const s = await makeSignedInUser(t, [role.name]);
  const csrf = await csrfFrom(s.agent, '/account');
  const content = JSON.stringify([{ email: 'imp-reader@example.com', first_name: 'R', last_name: 'R' }]);
  expect((await s.agent.get('/admin/users/import')).status).toBe(403);
  const res = await post(s.agent, csrf, { format: 'json', content });
  expect(res.status).toBe(403);
  expect(res.text).toContain('Not allowed');
  const api = await request(t.app).post('/api/admin/users/import').set('Authorization', s.bearer).send(JSON.parse(content));
  expect(api.status).toBe(403);
  expect(await countOf(['imp-reader@example.com'])).toBe(0);
  expect((await request(t.app).get('/api/admin/users/export').set('Authorization', s.bearer)).status).toBe(200);
});
