import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { insertClient } from '../../src/db/repositories/oauth-clients.repo';
import { insertUser, type UserRow } from '../../src/db/repositories/users.repo';
import { generateClientId, generateClientSecret } from '../../src/services/oauth/client-secrets';
import type { TestApp } from './test-app';

export const DEFAULT_PASSWORD = 'correct-horse-1';

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}@example.test`;
}

/** Inserts a user directly (verified unless told otherwise), optionally with global roles by name. */
export async function makeUser(
  t: TestApp,
  options: {
    email?: string;
    password?: string;
    roles?: string[];
    firstName?: string;
    lastName?: string;
    emailVerified?: boolean;
    isActive?: boolean;
  } = {},
): Promise<UserRow & { password: string }> {
  const password = options.password ?? DEFAULT_PASSWORD;
  const user = await insertUser(t.db, {
    id: randomUUID(),
    email: (options.email ?? uniqueEmail()).toLowerCase(),
    firstName: options.firstName ?? 'Test',
    lastName: options.lastName ?? 'User',
    passwordHash: await t.ctx.passwords.hash(password),
    emailVerified: options.emailVerified ?? true,
    now: t.clock.now(),
  });
  if (options.isActive === false) await t.db('users').where({ id: user.id }).update({ is_active: false });
  for (const role of options.roles ?? []) await grantRole(t, user.id, role);
  return { ...user, password };
}

/** Grants a role by name (global unless `application` is given), creating the role if it does not exist. */
export async function grantRole(t: TestApp, userId: string, roleName: string, application: string | null = null): Promise<string> {
  let role = await t.db('roles').where({ name: roleName, application }).first('id');
  if (!role) {
    role = { id: randomUUID() };
    await t.db('roles').insert({ id: role.id, name: roleName, application });
  }
  await t.db('user_roles').insert({ user_id: userId, role_id: role.id }).onConflict(['user_id', 'role_id']).ignore();
  return role.id as string;
}

/** Signs in through the API; returns the tokens and an agent that carries the session cookies. */
export async function signIn(
  t: TestApp,
  user: { email: string; password: string },
): Promise<{ accessToken: string; refreshToken: string; agent: TestAgent; cookies: string[] }> {
  const agent = request.agent(t.app);
  const res = await agent.post('/api/auth/login').send({ email: user.email, password: user.password });
  if (res.status !== 200) throw new Error(`signIn failed: ${res.status} ${JSON.stringify(res.body)}`);
  const setCookie = res.headers['set-cookie'] as unknown as string[];
  return { accessToken: res.body.accessToken, refreshToken: res.body.refreshToken, agent, cookies: setCookie };
}

/** A signed-in user with the given roles: its Bearer header value and the user row. */
export async function makeSignedInUser(t: TestApp, roles: string[] = []) {
  const user = await makeUser(t, { roles });
  const session = await signIn(t, user);
  return { user, ...session, bearer: `Bearer ${session.accessToken}` };
}

/** Inserts an OAuth client directly; returns the row and its plain secret. */
export async function makeClient(
  t: TestApp,
  options: { name?: string; redirectUris?: string[]; scopes?: string[]; postLogoutRedirectUris?: string[]; isActive?: boolean } = {},
) {
  const { secret, secretHash } = generateClientSecret();
  const client = await insertClient(t.db, {
    clientId: generateClientId(),
    name: options.name ?? 'Test App',
    secretHash,
    redirectUris: options.redirectUris ?? ['https://app.test/callback'],
    scopes: options.scopes ?? ['openid', 'profile', 'email'],
    postLogoutRedirectUris: options.postLogoutRedirectUris,
    isActive: options.isActive,
    now: t.clock.now(),
  });
  return { ...client, clientSecret: secret };
}
