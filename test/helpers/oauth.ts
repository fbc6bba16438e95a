import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeClient } from './factories';
import type { TestApp } from './test-app';

export type TestClient = Awaited<ReturnType<typeof makeClient>>;

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** HTTP Basic credentials as RFC 6749 §2.3.1 wants them: each part form-urlencoded, then base64. */
export function basicAuth(clientId: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString('base64')}`;
}

export function authorizeParams(
  client: { clientId: string; redirectUris: string[] },
  overrides: Record<string, string | undefined> = {},
): { params: Record<string, string>; verifier: string; state: string } {
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(8).toString('hex');
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUris[0],
    scope: 'openid profile email',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
  const params = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return { params, verifier, state };
}

export function authorizePath(params: Record<string, string>): string {
  return `/api/oauth/authorize?${new URLSearchParams(params)}`;
}

/** The query parameters of a Location header. */
export function locationParams(location: string): URLSearchParams {
  return new URL(location).searchParams;
}

/** Signed-in agent -> authorize -> (approve when asked) -> code. */
export async function obtainCode(
  agent: TestAgent,
  client: TestClient,
  overrides: Record<string, string | undefined> = {},
): Promise<{ code: string; verifier: string; state: string; redirectUri: string }> {
  const { params, verifier, state } = authorizeParams(client, overrides);
  const res = await agent.get(authorizePath(params));
  if (res.status !== 302) throw new Error(`authorize answered ${res.status} ${JSON.stringify(res.body)}`);
  let location: string = res.headers.location;
  const url = new URL(location);
  if (url.pathname === '/consent') {
    const requestId = url.searchParams.get('request_id')!;
    const approve = await agent.post('/api/oauth/authorize/approve').send({ request_id: requestId });
    if (approve.status !== 200) throw new Error(`approve answered ${approve.status} ${JSON.stringify(approve.body)}`);
    location = approve.body.redirect_url;
  }
  const code = locationParams(location).get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return { code, verifier, state, redirectUri: params.redirect_uri! };
}

export function exchangeCode(
  t: TestApp,
  client: TestClient,
  input: { code: string; verifier: string; redirectUri?: string },
) {
  return request(t.app)
    .post('/api/oauth/token')
    .set('Authorization', basicAuth(client.clientId, client.clientSecret))
    .type('form')
    .send({
      grant_type: 'authorization_code',
      code: input.code,
      code_verifier: input.verifier,
      redirect_uri: input.redirectUri ?? client.redirectUris[0],
    });
}

/** Full flow to an OAuth token response body for a signed-in agent. */
export async function issueOAuthTokens(
  t: TestApp,
  agent: TestAgent,
  client: TestClient,
  overrides: Record<string, string | undefined> = {},
): Promise<{ access_token: string; refresh_token: string; scope: string }> {
  const { code, verifier, redirectUri } = await obtainCode(agent, client, overrides);
  const res = await exchangeCode(t, client, { code, verifier, redirectUri });
  if (res.status !== 200) throw new Error(`token answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
