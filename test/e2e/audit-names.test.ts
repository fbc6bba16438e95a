import request from 'supertest';
import { backfillAuditNames } from '../../migrations/20261201121000_audit_event_names';
import { startWebhookWorker, type WebhookWorker } from '../../src/services/webhooks/queue';
import { makeSignedInUser, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * People are shown by name (docs/operations.md "Audit trail", docs/webhooks.md "Payload"): the audit trail keeps the
 * email and name of the actor and the subject as they were when the event happened (also after a rename or the
 * account's deletion), GET /api/admin/audit-events answers them, and webhook deliveries of user.* and auth.* events
 * carry `data.subject`, received by a real HTTP receiver.
 */
let t: TestApp;
let root: { bearer: string; user: { id: string; email: string } };
let worker: WebhookWorker;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await createTestApp();
  root = await makeSignedInUser(t, ['super_admin']);
  worker = await startWebhookWorker(t.ctx, { connectionString: t.databaseUrl, pollIntervalMs: 100, concurrency: 2 });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await t.close();
});

const api = () => request(t.app);
const events = async (query: Record<string, string>) => {
  const res = await api().get('/api/admin/audit-events').query(query).set('Authorization', root.bearer);
  expect(res.status).toBe(200);
  return res.body.events as Array<Record<string, unknown> & { type: string }>;
};

describe('names recorded with each event', () => {
  test('actor and subject by email and name; a later rename does not rewrite the past', async () => {
    const person = await makeUser(t, { firstName: 'Ada', lastName: 'Lovelace' });
    const put = await api().put(`/api/users/${person.id}`).set('Authorization', root.bearer).send({ first_name: 'Augusta' });
    expect(put.status).toBe(200);
    await api().put(`/api/users/${person.id}`).set('Authorization', root.bearer).send({ last_name: 'King' }).expect(200);
    const [second, first] = await events({ subject: person.id, type: 'user.changed' });
    expect(first).toMatchObject({
      actor: { type: 'user', id: root.user.id, email: root.user.email, name: 'Test User' },
      subject_id: person.id,
      subject: { id: person.id, email: person.email, name: 'Augusta Lovelace' },
    });
    expect(second!.subject).toEqual({ id: person.id, email: person.email, name: 'Augusta King' });
  });

  test('a sign-out names its person as subject; a role event has no user subject', async () => {
    const person = await makeUser(t, { firstName: 'Grace', lastName: 'Hopper' });
    const { accessToken } = await signIn(t, person);
    await api().post('/api/auth/logout').set('Authorization', `Bearer ${accessToken}`).send({});
    const [logout] = await events({ actor: person.id, type: 'auth.logout' });
    expect(logout).toMatchObject({ subject_id: null, subject: { id: person.id, email: person.email, name: 'Grace Hopper' } });
    const role = await api()
      .post('/api/rbac/roles')
      .set('Authorization', root.bearer)
      .send({ name: `names-${Date.now()}` });
    const [created] = await events({ subject: role.body.role.id, type: 'role.created' });
    expect(created!.subject).toBeNull();
  });

  test('a deleted account still shows the email recorded when its events happened', async () => {
    const connection = await api().post('/api/admin/scim-connections').set('Authorization', root.bearer).send({ name: 'Directory' });
    const scim = (r: request.Test) => r.set('Authorization', `Bearer ${connection.body.token}`).set('Accept', 'application/scim+json');
    const email = uniqueEmail();
    const created = await scim(api().post('/scim/v2/Users')).send({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: email,
      name: { givenName: 'Gone', familyName: 'Soon' },
      emails: [{ value: email, primary: true }],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await scim(api().delete(`/scim/v2/Users/${id}`))).status).toBe(204);
    expect(await t.db('users').where({ id }).first()).toBeUndefined();
    const trail = await events({ subject: id });
    expect(trail.map((e) => e.type)).toEqual(['user.deleted', 'user.created']);
    for (const e of trail) expect(e.subject).toEqual({ id, email, name: 'Gone Soon' });
    expect(trail[0]!.actor).toMatchObject({ type: 'scim_connection', name: 'Directory' });
  });

  test('rows written before names were kept are filled from the accounts that still exist', async () => {
    const person = await makeUser(t, { firstName: 'Old', lastName: 'Row' });
    await t.db('audit_events').insert({ type: 'user.changed', actor_id: root.user.id, subject_id: person.id, detail: {} });
    await t
      .db('audit_events')
      .insert({ type: 'user.changed', actor_id: null, subject_id: '00000000-0000-4000-8000-000000000000', detail: {} });
    await backfillAuditNames(t.db);
    const [row] = await events({ subject: person.id });
    expect(row).toMatchObject({ actor: { email: root.user.email }, subject: { id: person.id, email: person.email, name: 'Old Row' } });
    const [unknown] = await events({ subject: '00000000-0000-4000-8000-000000000000' });
    expect(unknown!.subject).toBeNull();
    // The trail is append-only again afterwards.
    await expect(t.db('audit_events').where({ subject_id: person.id }).update({ type: 'x' })).rejects.toThrow(/append-only/);
  });
});

describe('webhook payloads name the subject', () => {
  test('user.* and auth.* deliveries carry data.subject { id, email, name } as at the time of the event', async () => {
    const sub = await api()
      .post('/api/admin/webhooks')
      .set('Authorization', root.bearer)
      .send({ url: receiver.url, events: ['user.*', 'auth.*'] });
    expect(sub.status).toBe(201);
    receiver.secret = sub.body.secret;
    const person = await makeUser(t, { firstName: 'Hedy', lastName: 'Lamarr' });
    await signIn(t, person);
    await api().put(`/api/users/${person.id}`).set('Authorization', root.bearer).send({ first_name: 'Hedwig' }).expect(200);
    const ofPerson = () =>
      receiver.received.filter((r) => (r.payload?.data.subject as { id?: string } | null | undefined)?.id === person.id);
    await receiver.waitFor(() => ofPerson().some((r) => r.payload?.type === 'user.changed'));
    const login = ofPerson().find((r) => r.payload?.type === 'auth.login.succeeded');
    expect(login?.verified).toBe(true);
    expect(login!.payload!.data.subject).toEqual({ id: person.id, email: person.email, name: 'Hedy Lamarr' });
    const changed = ofPerson().find((r) => r.payload?.type === 'user.changed');
    expect(changed!.payload!.data).toMatchObject({
      subject_id: person.id,
      subject: { id: person.id, email: person.email, name: 'Hedwig Lamarr' },
      actor: { type: 'user', id: root.user.id, email: root.user.email },
    });
    await api().delete(`/api/admin/webhooks/${sub.body.webhook.id}`).set('Authorization', root.bearer);
  });
});
