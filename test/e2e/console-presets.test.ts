import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { CLIENT_PRESETS, PRESETS, type ClientPreset } from '../../src/declarations/client-presets';
import { makeSignedInUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Creating an application starts from what it is (docs/apps.md): the API's `preset`, the console's choice of a preset,
 * its form, the quick-start after creation (settings and the guide's code filled in, the secret once) and on the
 * application's page later, and the Overview's checklist while there are no applications.
 */
let t: TestApp;
let admin: Awaited<ReturnType<typeof makeSignedInUser>>;

beforeAll(async () => {
  t = await createTestApp();
  admin = await makeSignedInUser(t, ['super_admin']);
});
afterAll(async () => {
  await t.close();
});

/** What a browser sends for the form of a page: its hidden fields, checked boxes and radios, and `fill`. */
function formOf(page: string, fill: Record<string, string>): Record<string, string | string[]> {
  const form = /<form method="post" action="\/admin\/applications"[\s\S]*?<\/form>/.exec(page)?.[0] ?? '';
  const out: Record<string, string | string[]> = {};
  const add = (name: string, value: string) => {
    const had = out[name];
    out[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  };
  for (const m of form.matchAll(/<input([^>]*)>/g)) {
    const attrs = m[1]!;
    const name = /name="([^"]+)"/.exec(attrs)?.[1];
    const value = /value="([^"]*)"/.exec(attrs)?.[1] ?? '';
    const type = /type="([^"]+)"/.exec(attrs)?.[1] ?? 'text';
    if (!name) continue;
    if (type === 'hidden' || ((type === 'checkbox' || type === 'radio') && / checked/.test(attrs))) add(name, value);
  }
  return { ...out, ...fill };
}

const unescape = (html: string) =>
  html
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');

async function createInConsole(agent: TestAgent, preset: ClientPreset, fill: Record<string, string>) {
  const page = await agent.get(`/admin/applications/new?preset=${preset}`);
  expect(page.status).toBe(200);
  const res = await agent.post('/admin/applications').type('form').send(formOf(page.text, fill));
  return { form: page.text, res };
}

describe('the API: preset fills in what the body leaves out', () => {
  test.each([
    ['web', { redirect_uris: ['https://app.example.com/callback'] }, 'confidential', ['authorization_code', 'refresh_token'], true],
    ['spa', { redirect_uris: ['http://localhost:5173/callback'] }, 'public', ['authorization_code', 'refresh_token'], false],
    ['native', { redirect_uris: ['http://127.0.0.1/callback'] }, 'public', ['authorization_code', 'refresh_token'], false],
    ['m2m', {}, 'confidential', ['client_credentials'], true],
    ['device', {}, 'public', ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'], false],
  ] as const)('%s', async (preset, extra, type, grants, secret) => {
    const res = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin.bearer)
      .send({ name: `Preset ${preset}`, preset, ...extra });
    expect(res.status).toBe(201);
    expect(res.body.client).toMatchObject({
      type,
      grant_types: grants,
      scopes: [...PRESETS[preset].scopes],
      token_endpoint_auth_method: type === 'public' ? 'none' : 'client_secret_basic',
    });
    expect(typeof res.body.client_secret === 'string').toBe(secret);
    if (preset === 'spa') expect(res.body.client.allowed_origins).toEqual(['http://localhost:5173']);
  });

  test('what the body says wins; a type against the preset and an unknown preset are 400s naming the field', async () => {
    const own = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin.bearer)
      .send({ name: 'Own scopes', preset: 'm2m', scopes: ['write'] });
    expect(own.status).toBe(201);
    expect(own.body.client.scopes).toEqual(['write']);
    const conflict = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin.bearer)
      .send({ name: 'Conflict', preset: 'spa', type: 'confidential', redirect_uris: ['https://app.example.com/cb'] });
    expect(conflict.status).toBe(400);
    expect(conflict.body.error).toBe('validation_error');
    expect(conflict.body.details).toEqual([expect.objectContaining({ path: 'type' })]);
    const unknown = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin.bearer)
      .send({ name: 'Unknown', preset: 'mainframe' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toEqual([expect.objectContaining({ path: 'preset' })]);
    const noRedirect = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin.bearer)
      .send({ name: 'No redirect', preset: 'spa' });
    expect(noRedirect.status).toBe(400);
    expect(noRedirect.body.details).toEqual([expect.objectContaining({ path: 'redirect_uris' })]);
  });
});

describe('the console', () => {
  test('while there are no applications the Overview shows the checklist; the first application ends it', async () => {
    const fresh = await createTestApp();
    try {
      const s = await makeSignedInUser(fresh, ['admin']);
      const before = await s.agent.get('/admin');
      expect(before.text).toContain('Get started');
      expect(before.text).toContain('href="/admin/applications/new"');
      const de = await s.agent.get('/admin').set('Accept-Language', 'de');
      expect(de.text).toContain('Erste Schritte');
      await request(fresh.app).post('/api/admin/oauth-clients').set('Authorization', s.bearer).send({ name: 'First', preset: 'm2m' });
      expect((await s.agent.get('/admin')).text).not.toContain('Get started');
    } finally {
      await fresh.close();
    }
  });

  test('"Create an application" first asks what it is: the five presets and a custom form', async () => {
    const page = await admin.agent.get('/admin/applications/new');
    expect(page.status).toBe(200);
    for (const p of CLIENT_PRESETS) expect(page.text).toContain(`href="/admin/applications/new?preset=${p}"`);
    expect(page.text).toContain('href="/admin/applications/new?preset=custom"');
    expect(page.text).toContain('Single-page app');
    const de = await admin.agent.get('/admin/applications/new').set('Accept-Language', 'de');
    expect(de.text).toContain('Single-Page-Anwendung');
    expect(de.text).toContain('Maschine zu Maschine');
  });

  const cases: Array<[ClientPreset, Record<string, string>, string, boolean]> = [
    ['web', { redirect_uris: 'https://reports.example.com/callback' }, 'docs/guide-third-party-apps.md', true],
    ['spa', { redirect_uris: 'http://localhost:5173/callback' }, 'docs/guide-spa.md', false],
    ['native', { redirect_uris: 'http://127.0.0.1/callback' }, 'docs/guide-native-cli.md', false],
    ['m2m', {}, 'docs/guide-machine-to-machine.md', true],
    ['device', {}, 'docs/guide-device.md', false],
  ];
  test.each(cases)('a %s app created from its form: the quick-start, and again from its page', async (preset, fill, guide, secret) => {
    const { form, res } = await createInConsole(admin.agent, preset, { name: `Console ${preset}`, ...fill });
    // The form shows what this kind needs only.
    expect(form.includes('name="redirect_uris"')).toBe(PRESETS[preset].redirects);
    expect(form.includes('name="allowed_origins"')).toBe(preset === 'spa');
    expect(res.status).toBe(201);
    const clientId = /id="client-id">([^<]+)</.exec(res.text)?.[1];
    expect(clientId).toBeDefined();
    const client = await request(t.app).get(`/api/admin/oauth-clients/${clientId}`).set('Authorization', admin.bearer);
    expect(client.body.client.type).toBe(PRESETS[preset].type);
    expect([...client.body.client.grant_types].sort()).toEqual([...PRESETS[preset].grantTypes].sort());
    const issuer = t.ctx.config.oidcIssuer;
    for (const text of [issuer, `${issuer}/.well-known/openid-configuration`, guide, 'Quick start']) expect(res.text).toContain(text);
    const code = unescape(/id="quick-start-code"[^>]*>([\s\S]*?)<\/code>/.exec(res.text)?.[1] ?? '');
    expect(code).toContain(`'${clientId}'`);
    expect(code).toContain(`'${issuer}'`);
    expect(res.text.includes('id="client-secret"')).toBe(secret);
    const stored = res.text.match(/id="client-secret">([^<]+)</)?.[1];
    if (stored) expect(code).not.toContain(stored);

    // Later: the application's page links its quick-start, which has everything but the secret.
    const detail = await admin.agent.get(`/admin/applications/${clientId}`);
    expect(detail.text).toContain(`href="/admin/applications/${clientId}/quick-start"`);
    const later = await admin.agent.get(`/admin/applications/${clientId}/quick-start`);
    expect(later.status).toBe(200);
    expect(unescape(/id="quick-start-code"[^>]*>([\s\S]*?)<\/code>/.exec(later.text)?.[1] ?? '')).toBe(code);
    expect(later.text).not.toContain('id="client-secret"');
    expect(later.text).toContain(guide);
    const de = await admin.agent.get(`/admin/applications/${clientId}/quick-start`).set('Accept-Language', 'de');
    expect(de.text).toContain('Schnellstart');
  });

  test('a refused preset form comes back with the preset, the values and the error beside the field', async () => {
    const { res } = await createInConsole(admin.agent, 'spa', { name: 'Refused SPA', redirect_uris: 'not a url' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('<title>Error');
    expect(res.text).toContain('name="preset" value="spa"');
    expect(res.text).toContain('Refused SPA');
    expect(res.text).toContain('id="f-redirect_uris-error"');
  });

  test('a manager may not open the form nor a quick-start (the API refuses it oauth_clients:*)', async () => {
    const manager = await makeSignedInUser(t, ['manager']);
    expect((await manager.agent.get('/admin/applications/new?preset=spa')).status).toBe(403);
    const created = await request(t.app)
      .post('/api/admin/oauth-clients')
      .set('Authorization', admin.bearer)
      .send({ name: 'Hidden', preset: 'm2m' });
    expect((await manager.agent.get(`/admin/applications/${created.body.client.client_id}/quick-start`)).status).toBe(403);
  });
});
