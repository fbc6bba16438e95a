import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §18, SMTP as a live setting, with the real mailer and real SMTP servers: no SMTP_URL in the environment, an
 * admin sets smtp_url and mail_from through the API and the "send a test mail" action reaches that server from that
 * sender at once; pointed at another server, the next mail goes there (no restart); the console's button does the same.
 */
let t: TestApp;
let first: TestSmtpServer;
let second: TestSmtpServer;

beforeAll(async () => {
  [first, second] = [await startSmtpServer(), await startSmtpServer()];
  t = await createTestApp({ mailer: 'smtp' });
});
afterAll(async () => {
  await t?.close();
  await first?.close();
  await second?.close();
});

test('smtp_url and mail_from take effect at once for the test mail; another server receives the next one', async () => {
  const admin = await makeSignedInUser(t, ['super_admin']);
  const set = await request(t.app)
    .patch('/api/admin/settings')
    .set('Authorization', admin.bearer)
    .send({ smtp_url: first.url, mail_from: 'sso@first.test' });
  expect(set.status).toBe(200);
  const sent = await request(t.app).post('/api/admin/settings/test-mail').set('Authorization', admin.bearer).send({ to: 'ops@acme.test' });
  expect(sent.status).toBe(202);
  const [mail] = await first.waitForMails('ops@acme.test');
  expect(mail?.subject).toMatch(/^Test mail from /);
  expect(mail?.raw).toMatch(/^From: .*sso@first\.test/m);
  expect(second.mails).toEqual([]);

  // Pointed elsewhere: the console's button, as an admin uses it, reaches the new server only.
  expect((await request(t.app).patch('/api/admin/settings').set('Authorization', admin.bearer).send({ smtp_url: second.url })).status).toBe(
    200,
  );
  const page = await admin.agent.get('/admin/settings');
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
  expect(csrf).toBeDefined();
  const button = await admin.agent.post('/admin/settings/test-mail').type('form').send({ csrf, to: 'ops2@acme.test' });
  expect(button.status).toBe(303);
  expect(await second.waitForMails('ops2@acme.test')).toHaveLength(1);
  expect(first.mailsTo('ops2@acme.test')).toEqual([]);
}, 90_000);
