import request from 'supertest';
import { ensureSuperAdmin } from '../../src/services/bootstrap.service';
import { ensureSetupLink } from '../../src/services/setup.service';
import { makeUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/** /setup: the one-time first-run page (the browser path is in test/smoke/first-run.test.ts). */
let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});
afterEach(async () => {
  await t.close();
});

async function formFor(agent: ReturnType<typeof request.agent>, token: string): Promise<string> {
  const page = await agent.get(`/setup?token=${token}`);
  expect(page.status).toBe(200);
  expect(page.headers['cache-control']).toBe('no-store');
  return /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
}

const form = (token: string, csrf: string, email = 'first@example.test') => ({
  token,
  csrf,
  email,
  first_name: 'First',
  last_name: 'Admin',
  password: 'first-password',
  password_confirm: 'first-password',
});

async function superAdmins(): Promise<string[]> {
  const rows = await t
    .db('users as u')
    .join('user_roles as ur', 'ur.user_id', 'u.id')
    .join('roles as r', 'r.id', 'ur.role_id')
    .where('r.name', 'super_admin')
    .select('u.email');
  return rows.map((r: { email: string }) => r.email).sort();
}

test('the link is stable across instances, works once, and is dead once any admin exists', async () => {
  const link = (await ensureSetupLink(t.ctx))!;
  expect(link).toMatch(/^http:\/\/sso\.test\/setup\?token=[A-Za-z0-9_-]{43}$/);
  // A second instance (same database) logs the same link.
  expect(await ensureSetupLink(t.ctx)).toBe(link);
  const token = new URL(link).searchParams.get('token')!;

  expect((await request(t.app).get('/setup?token=wrong')).status).toBe(404);
  expect((await request(t.app).get('/setup')).status).toBe(404);

  const agent = request.agent(t.app);
  const csrf = await formFor(agent, token);
  const done = await agent.post('/setup').type('form').send(form(token, csrf));
  expect(done.status).toBe(303);
  expect(done.headers.location).toBe('/setup?done=1');
  expect(await superAdmins()).toEqual(['first@example.test']);
  const user = await t.db('users').where({ email: 'first@example.test' }).first();
  expect(user.email_verified).toBe(true);

  const again = await agent
    .post('/setup')
    .type('form')
    .send(form(token, csrf, 'second@example.test'));
  expect(again.status).toBe(404);
  expect((await agent.get(`/setup?token=${token}`)).status).toBe(404);
  expect(await ensureSetupLink(t.ctx)).toBeUndefined();
  expect(await superAdmins()).toEqual(['first@example.test']);

  await t.ctx.events.idle?.();
  const events = await t.db('audit_events').where({ subject_id: user.id }).orderBy('id').select('type', 'detail');
  expect(events).toEqual([
    { type: 'user.created', detail: { via: 'setup' } },
    { type: 'role.assigned', detail: { role: 'super_admin', via: 'setup' } },
  ]);
});

test('two concurrent submissions: exactly one admin is created', async () => {
  const token = new URL((await ensureSetupLink(t.ctx))!).searchParams.get('token')!;
  const a = request.agent(t.app);
  const b = request.agent(t.app);
  const [csrfA, csrfB] = [await formFor(a, token), await formFor(b, token)];
  const [ra, rb] = await Promise.all([
    a
      .post('/setup')
      .type('form')
      .send(form(token, csrfA, 'a@example.test')),
    b
      .post('/setup')
      .type('form')
      .send(form(token, csrfB, 'b@example.test')),
  ]);
  expect([ra.status, rb.status].sort()).toEqual([303, 404]);
  expect(await superAdmins()).toHaveLength(1);
});

test('CSRF, validation and a taken address answer with the form again; nothing is created', async () => {
  const token = new URL((await ensureSetupLink(t.ctx))!).searchParams.get('token')!;
  const agent = request.agent(t.app);
  const csrf = await formFor(agent, token);

  expect((await request(t.app).post('/setup').type('form').send(form(token, csrf))).status).toBe(403);
  expect((await agent.post('/setup').set('Origin', 'https://evil.test').type('form').send(form(token, csrf))).status).toBe(403);

  const short = await agent
    .post('/setup')
    .type('form')
    .send({ ...form(token, csrf), password: 'abc', password_confirm: 'abc' });
  expect(short.status).toBe(400);
  expect(short.text).toContain('at least 6 characters');
  expect(short.text).toContain('value="first@example.test"');
  const mismatch = await agent
    .post('/setup')
    .type('form')
    .send({ ...form(token, csrf), password_confirm: 'other-password' });
  expect(mismatch.status).toBe(400);
  expect(mismatch.text).toContain('The two passwords are not the same');
  const badEmail = await agent
    .post('/setup')
    .type('form')
    .send({ ...form(token, csrf), email: 'not-an-email' });
  expect(badEmail.status).toBe(400);

  const existing = await makeUser(t);
  const taken = await agent
    .post('/setup')
    .type('form')
    .send(form(token, csrf, existing.email));
  expect(taken.status).toBe(409);
  expect(taken.text).toContain('An account with this email address already exists');
  expect(await superAdmins()).toEqual([]);
  // The link still works after all of that.
  expect((await agent.post('/setup').type('form').send(form(token, csrf))).status).toBe(303);
});

test('two instances starting together with the same BOOTSTRAP_ADMIN_*: both start, one admin exists', async () => {
  const input = { email: 'boot@example.test', password: 'boot-password' };
  const results = await Promise.all([ensureSuperAdmin(t.ctx, input), ensureSuperAdmin(t.ctx, input), ensureSuperAdmin(t.ctx, input)]);
  expect(results.filter((r) => r.created)).toHaveLength(1);
  expect(new Set(results.map((r) => r.userId)).size).toBe(1);
  expect(await superAdmins()).toEqual(['boot@example.test']);
  // With an admin there, the setup link is dead.
  expect(await ensureSetupLink(t.ctx)).toBeUndefined();
});
