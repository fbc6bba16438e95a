import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeUser, signIn } from '../helpers/factories';
import { enrolTotp, totpCode } from '../helpers/mfa';
import { csrfFrom } from '../helpers/oauth';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 30 (info): the CSRF cookie is rotated at sign-in, so a value planted in or read from the browser before the
 * sign-in never works after it. Every page sign-in ends in the same place (sign-in-flow.ts finishSignIn: password,
 * second step, passkey, identity provider callback); sign-up and the API's sign-ins rotate it too.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** The csrf cookie the browser keeps from this answer (the last one set wins). */
const csrfCookie = (res: request.Response) =>
  ((res.headers['set-cookie'] as unknown as string[] | undefined) ?? [])
    .filter((c) => c.startsWith('csrf='))
    .at(-1)
    ?.split(';')[0]
    ?.slice(5);

/** A form post of the signed-in pages that checks the CSRF pair first: 403 when the pair is refused. */
async function accountPost(agent: TestAgent, csrf: string) {
  return agent.post('/account/passkeys/rename').type('form').send({ csrf, id: '00000000-0000-4000-8000-000000000000', name: 'x' });
}

test('password sign-in on /login: the value from before is refused afterwards, the new one works', async () => {
  const user = await makeUser(t);
  const agent = request.agent(t.app);
  const before = await csrfFrom(agent, '/login');
  const res = await agent.post('/login').type('form').send({ email: user.email, password: user.password, csrf: before });
  expect(res.status).toBe(303);
  const rotated = csrfCookie(res);
  expect(rotated).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(rotated).not.toBe(before);
  expect((await accountPost(agent, before)).status).toBe(403);
  const after = await csrfFrom(agent, '/account');
  expect(after).toBe(rotated);
  expect((await accountPost(agent, after)).status).not.toBe(403);
});

test('second step on /login/mfa: rotated when the sign-in completes', async () => {
  const user = await makeUser(t);
  const { secret } = await enrolTotp(t, (await signIn(t, user)).agent);
  const agent = request.agent(t.app);
  const before = await csrfFrom(agent, '/login');
  const step = await agent.post('/login').type('form').send({ email: user.email, password: user.password, csrf: before });
  expect(step.status).toBe(200);
  const mfaToken = /name="mfa_token" value="([^"]+)"/.exec(step.text)![1];
  const done = await agent
    .post('/login/mfa')
    .type('form')
    .send({ csrf: before, mfa_token: mfaToken, code: totpCode(t, secret) });
  expect(done.status).toBe(303);
  expect(csrfCookie(done)).not.toBe(before);
  expect((await accountPost(agent, before)).status).toBe(403);
});

test('sign-up on /register and the API sign-in rotate it too', async () => {
  const agent = request.agent(t.app);
  const before = await csrfFrom(agent, '/register');
  const res = await agent
    .post('/register')
    .type('form')
    .send({
      csrf: before,
      email: `csrf-${Date.now()}@example.test`,
      first_name: 'A',
      last_name: 'B',
      password: 'a-long-password-1',
      password_confirm: 'a-long-password-1',
    });
  expect(res.status).toBe(303);
  expect(csrfCookie(res)).not.toBe(before);
  expect((await accountPost(agent, before)).status).toBe(403);

  const user = await makeUser(t);
  const api = request.agent(t.app);
  const old = await csrfFrom(api, '/login');
  const login = await api.post('/api/auth/login').send({ email: user.email, password: user.password });
  expect(login.status).toBe(200);
  expect(csrfCookie(login)).not.toBe(old);
  expect((await accountPost(api, old)).status).toBe(403);
});
