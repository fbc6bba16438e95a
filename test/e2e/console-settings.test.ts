import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeSignedInUser } from '../helpers/factories';
import { csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The console's Settings form (docs/settings.md), built from GET|PATCH /api/admin/settings: every setting with its
 * variable name, the pinned ones locked, only what changed is sent, refusals beside the field with an error summary,
 * the secret write-only, the test mail; English and German.
 */
let t: TestApp;
let superAdmin: { agent: TestAgent; csrf: string; bearer: string };

beforeAll(async () => {
  // ALLOWED_ORIGINS is pinned by the test environment (https://portal.test).
  t = await createTestApp();
  superAdmin = await consoleAgent(['super_admin']);
});
afterAll(async () => {
  await t?.close();
});

async function consoleAgent(roles: string[]) {
  const s = await makeSignedInUser(t, roles);
  return { agent: s.agent, bearer: s.bearer, csrf: await csrfFrom(s.agent, '/admin/settings') };
}

/** The form as the page shows it: every field with its value, and the hidden fields. */
async function shownForm(agent: TestAgent): Promise<Record<string, string>> {
  const html = (await agent.get('/admin/settings')).text;
  const form = html.slice(html.indexOf('action="/admin/settings"'), html.indexOf('</form>', html.indexOf('action="/admin/settings"')));
  const fields: Record<string, string> = {};
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[m[1]!] = decode(m[2]!);
  for (const m of form.matchAll(/<input id="f-([^"]+)" name="[^"]+"(?! disabled)[^>]*?value="([^"]*)"/g)) fields[m[1]!] = decode(m[2]!);
  for (const m of form.matchAll(/<textarea id="f-([^"]+)" name="[^"]+"(?! disabled)[^>]*>([^<]*)<\/textarea>/g))
    fields[m[1]!] = decode(m[2]!);
  for (const m of form.matchAll(/<select id="f-([^"]+)" name="[^"]+"(?! disabled)[^>]*>([\s\S]*?)<\/select>/g)) {
    fields[m[1]!] = /<option value="([^"]*)" selected/.exec(m[2]!)?.[1] ?? '';
  }
  return fields;
}
const decode = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

const api = (bearer = superAdmin.bearer) => request(t.app).get('/api/admin/settings').set('Authorization', bearer);
const valueOf = async (name: string) =>
  ((await api()).body.settings as Array<{ name: string; value: unknown; set?: boolean; source: string }>).find((s) => s.name === name)!;

async function flashAfter(agent: TestAgent, res: request.Response): Promise<string> {
  expect(res.status).toBe(303);
  const page = await agent.get(res.headers.location as string);
  const match = /<p class="(ok|error)" role="(?:status|alert)">([^<]*)<\/p>/.exec(page.text);
  return match ? `${match[1]}: ${match[2]}` : '(no flash)';
}

test('every setting is shown with its label and variable; the pinned one is locked and names its variable', async () => {
  const page = await superAdmin.agent.get('/admin/settings');
  expect(page.status).toBe(200);
  expect(page.text).toContain('Self-service sign-up');
  expect(page.text).toContain('<code class="env-var">REGISTRATION</code>');
  expect(page.text).toContain('<code class="env-var">SMTP_URL</code>');
  expect(page.text).toMatch(/<textarea id="f-allowed_origins" name="allowed_origins" disabled[^>]*>https:\/\/portal.test<\/textarea>/);
  expect(page.text).toContain('Set by the environment variable ALLOWED_ORIGINS: change it there and restart.');
  // The start-up configuration stays below, masked.
  expect(page.text).toContain('Start-up configuration');
  expect(page.text).not.toContain(t.config.jwtAccessSecret);
});

test('a change is saved through the API (audited), only the changed setting is sent, and the flash says so', async () => {
  const fields = await shownForm(superAdmin.agent);
  expect(fields.brand_name).toBe('service-sso');
  const res = await superAdmin.agent
    .post('/admin/settings')
    .type('form')
    .send({ ...fields, csrf: superAdmin.csrf, brand_name: 'Acme ID', invitation_ttl_hours: '48' });
  expect(await flashAfter(superAdmin.agent, res)).toBe('ok: Settings saved. Every instance applies them within two seconds.');
  expect(await valueOf('brand_name')).toMatchObject({ value: 'Acme ID', source: 'stored' });
  expect(await valueOf('invitation_ttl_hours')).toMatchObject({ value: 48, source: 'stored' });
  // Unchanged settings stay defaults (not stored).
  expect(await valueOf('registration')).toMatchObject({ source: 'default' });
  const audit = await t.db('audit_events').where({ type: 'settings.changed' }).orderBy('occurred_at', 'desc').first();
  expect(audit.detail.changes).toEqual([
    { name: 'invitation_ttl_hours', before: 72, after: 48 },
    { name: 'brand_name', before: 'service-sso', after: 'Acme ID' },
  ]);

  const same = await superAdmin.agent
    .post('/admin/settings')
    .type('form')
    .send({ ...(await shownForm(superAdmin.agent)), csrf: superAdmin.csrf });
  expect(await flashAfter(superAdmin.agent, same)).toBe('error: Nothing changed.');
});

test('a bad value comes back beside its field with an error summary, the title starting with "Error", values kept', async () => {
  const fields = await shownForm(superAdmin.agent);
  const res = await superAdmin.agent
    .post('/admin/settings')
    .type('form')
    .send({ ...fields, csrf: superAdmin.csrf, brand_color: 'pink', invitation_ttl_hours: '9999', brand_name: 'Kept' });
  expect(res.status).toBe(400);
  expect(res.text).toMatch(/<title>Error/);
  expect(res.text).toContain('id="error-summary"');
  expect(res.text).toContain('href="#f-brand_color"');
  expect(res.text).toMatch(/id="f-invitation_ttl_hours-error">[^<]*at most 720/);
  expect(res.text).toMatch(/id="f-brand_color-error">/);
  expect(res.text).toContain('value="Kept"');
  expect(res.text).toContain('value="pink"');
  expect((await valueOf('brand_name')).value).not.toBe('Kept');
});

test('the SMTP URL is write-only: set, never shown, removed with the box', async () => {
  const secret = 'smtp://user:hunter2-secret@mail.example.com:587';
  const fields = await shownForm(superAdmin.agent);
  const res = await superAdmin.agent
    .post('/admin/settings')
    .type('form')
    .send({ ...fields, csrf: superAdmin.csrf, smtp_url: secret });
  expect(res.status).toBe(303);
  expect(await valueOf('smtp_url')).toMatchObject({ value: null, set: true });
  const page = await superAdmin.agent.get('/admin/settings');
  expect(page.text).not.toContain('hunter2-secret');
  expect(page.text).toContain('A value is stored.');
  // A refused form never echoes it either.
  const refused = await superAdmin.agent
    .post('/admin/settings')
    .type('form')
    .send({ ...(await shownForm(superAdmin.agent)), csrf: superAdmin.csrf, smtp_url: 'smtp://x:other-secret@h', brand_color: 'pink' });
  expect(refused.status).toBe(400);
  expect(refused.text).not.toContain('other-secret');
  const cleared = await superAdmin.agent
    .post('/admin/settings')
    .type('form')
    .send({ ...(await shownForm(superAdmin.agent)), csrf: superAdmin.csrf, clear_smtp_url: 'true' });
  expect(cleared.status).toBe(303);
  expect(await valueOf('smtp_url')).toMatchObject({ set: false });
});

test('an admin without system:manage_settings sees the sensitive settings locked and no test mail, and may change the rest', async () => {
  const admin = await consoleAgent(['admin']);
  const page = await admin.agent.get('/admin/settings');
  expect(page.status).toBe(200);
  expect(page.text).toMatch(/<select id="f-registration" name="registration" disabled/);
  expect(page.text).toContain('Changing this needs the permission system:manage_settings.');
  expect(page.text).not.toContain('action="/admin/settings/test-mail"');
  const res = await admin.agent
    .post('/admin/settings')
    .type('form')
    .send({ ...(await shownForm(admin.agent)), csrf: admin.csrf, default_locale: 'de' });
  expect(await flashAfter(admin.agent, res)).toMatch(/^ok: /);
  expect((await valueOf('default_locale')).value).toBe('de');
  await request(t.app).patch('/api/admin/settings').set('Authorization', superAdmin.bearer).send({ default_locale: 'en' }).expect(200);
  // The test mail's route refuses it as the API does.
  expect((await admin.agent.post('/admin/settings/test-mail').type('form').send({ csrf: admin.csrf, to: 'a@example.test' })).status).toBe(
    403,
  );
});

test('the test mail button sends a mail; a bad address is refused beside the field', async () => {
  const before = t.mails.length;
  const res = await superAdmin.agent.post('/admin/settings/test-mail').type('form').send({ csrf: superAdmin.csrf, to: 'ops@example.test' });
  expect(await flashAfter(superAdmin.agent, res)).toMatch(/^ok: A test mail to ops@example.test is on its way/);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(t.mails.slice(before).map((m) => m.to)).toContain('ops@example.test');
  const bad = await superAdmin.agent.post('/admin/settings/test-mail').type('form').send({ csrf: superAdmin.csrf, to: 'not-an-address' });
  expect(bad.status).toBe(400);
  expect(bad.text).toMatch(/id="f-to-error">/);
});

test('in German: labels, hints and the lock', async () => {
  const page = await superAdmin.agent.get('/admin/settings').set('Accept-Language', 'de');
  expect(page.text).toContain('Selbstregistrierung');
  expect(page.text).toContain('Durch die Umgebungsvariable ALLOWED_ORIGINS festgelegt');
  expect(page.text).toContain('Einstellungen speichern');
  expect(page.text).not.toContain('Self-service sign-up');
});
