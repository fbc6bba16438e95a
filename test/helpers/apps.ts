import { randomUUID } from 'node:crypto';
import type TestAgent from 'supertest/lib/agent';
import { insertApiResource } from '../../src/db/repositories/api-resources.repo';
import { insertClient } from '../../src/db/repositories/oauth-clients.repo';
import { generateClientId, generateClientSecret } from '../../src/services/oauth/client-secrets';
import type { TestApp } from './test-app';

/** Inserts a client of any kind (CONTRACT §12): a public one has no secret (clientSecret undefined). */
export async function makeAppClient(
  t: TestApp,
  options: {
    type?: 'confidential' | 'public';
    grantTypes?: string[];
    allowedResources?: string[];
    redirectUris?: string[];
    scopes?: string[];
    name?: string;
  } = {},
) {
  const type = options.type ?? 'confidential';
  const { secret, secretHash } = type === 'confidential' ? generateClientSecret() : { secret: undefined, secretHash: null };
  const client = await insertClient(t.db, {
    clientId: generateClientId(),
    name: options.name ?? 'Test App',
    secretHash,
    type,
    grantTypes: options.grantTypes ?? ['authorization_code', 'refresh_token'],
    allowedResources: options.allowedResources ?? [],
    redirectUris: options.redirectUris ?? ['https://app.test/callback'],
    scopes: options.scopes ?? ['openid', 'profile', 'email'],
    now: t.clock.now(),
  });
  return { ...client, clientSecret: secret };
}

/** Registers an API resource; its identifier is unique per call unless given. */
export async function makeApiResource(
  t: TestApp,
  options: { identifier?: string; scopes?: string[]; ttlSeconds?: number; name?: string; roleBasedAccess?: boolean } = {},
) {
  return insertApiResource(t.db, {
    id: randomUUID(),
    identifier: options.identifier ?? `https://api-${randomUUID().slice(0, 8)}.test/`,
    name: options.name ?? 'Invoices API',
    scopes: options.scopes ?? ['invoices:read', 'invoices:write'],
    accessTokenTtlSeconds: options.ttlSeconds ?? 3600,
    openRegistration: false,
    roleBasedAccess: options.roleBasedAccess ?? false,
    now: t.clock.now(),
  });
}

/** The CSRF field of a server-rendered page. */
export const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/** A signed-in browser (supertest agent) on /device: types the code, then approves or denies. Returns the last page. */
export async function answerOnDevicePage(agent: TestAgent, userCode: string, decision: 'approve' | 'deny') {
  const entry = await agent.get('/device');
  if (entry.status !== 200) throw new Error(`/device answered ${entry.status}`);
  const confirm = await agent
    .post('/device')
    .type('form')
    .send({ user_code: userCode, csrf: csrfOf(entry.text) });
  if (confirm.status !== 200) throw new Error(`POST /device answered ${confirm.status}: ${confirm.text}`);
  return agent
    .post('/device/decide')
    .type('form')
    .send({ user_code: userCode, decision, csrf: csrfOf(confirm.text) });
}
