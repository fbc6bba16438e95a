import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Console actions built from their REST endpoints (src/console/action.ts): the confirmation is asked in the request's
 * language, a refused form answers the API schema's messages in German beside the field and in the error summary with
 * the German "Fehler" title, and the action's guard is its endpoint's (a manager is refused by both faces alike).
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

test('a confirmation in German, then the action; a refused form in German with the error summary', async () => {
  const s = await makeSignedInUser(t, ['super_admin']);
  const csrf = csrfOf((await s.agent.get('/admin/webhooks/new').set('Accept-Language', 'de')).text);
  const created = await request(t.app)
    .post('/api/admin/webhooks')
    .set('Authorization', s.bearer)
    .send({ url: 'https://93.184.215.14/hook', events: ['user.*'] })
    .expect(201);
  const id = created.body.webhook.id as string;
  const ask = await s.agent.post(`/admin/webhooks/${id}/rotate`).set('Accept-Language', 'de').type('form').send({ csrf });
  expect(ask.status).toBe(200);
  expect(ask.text).toContain('<html lang="de">');
  expect(ask.text).not.toContain('Rotate the signing secret');
  expect(ask.text).toContain('>Signatur-Secret erneuern<');
  expect(ask.text).toContain('name="confirm" value="yes"');

  const bad = await s.agent
    .post('/admin/webhooks')
    .set('Accept-Language', 'de')
    .type('form')
    .send({ csrf, url: 'not a url', events: '', description: 'Lohn' });
  expect(bad.status).toBe(400);
  expect(bad.text).toMatch(/<title>Fehler: Webhook erstellen · /);
  expect(bad.text).toContain('id="error-summary"');
  expect(bad.text).toContain('<a href="#f-url">Geben Sie eine vollständige URL ein');
  expect(bad.text).toMatch(/id="f-events-error">Geben Sie mindestens einen Ereignistyp an\./);
  expect(bad.text).toContain('value="not a url"');
  expect(bad.text).toContain('value="Lohn"');
});

test('the users actions keep their endpoint guard: a manager is refused by the console as by the API', async () => {
  const manager = await makeSignedInUser(t, ['manager']);
  const target = await makeSignedInUser(t, []);
  const csrf = csrfOf((await manager.agent.get('/admin/users').set('Accept-Language', 'en')).text);
  const page = await manager.agent.post(`/admin/users/${target.user.id}/deactivate`).type('form').send({ csrf, confirm: 'yes' });
  const api = await request(t.app).delete(`/api/users/${target.user.id}`).set('Authorization', manager.bearer);
  expect([page.status, api.status]).toEqual([403, 403]);
  expect((await t.db('users').where({ id: target.user.id }).first()).is_active).toBe(true);
});
