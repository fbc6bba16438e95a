import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';

/**
 * Loads an ESM-only package (openid-client, @auth/core) with Node's own loader, past jest's CommonJS registry (see
 * loadOAuth4WebApi): the library runs unmodified, with Node's real fetch.
 */
export function loadEsm<T>(specifier: string): T {
  const nodeModule = require('node:module') as { _load(request: string, parent: unknown, isMain: boolean): unknown };
  return nodeModule._load(require.resolve(specifier), null, false) as T;
}

export type OpenIdClient = typeof import('openid-client', { with: { 'resolution-mode': 'import' } });

/**
 * What a person does in the browser between a relying party's authorization URL and its callback: the hosted login
 * page (with its CSRF field), then the consent page (Approve). Returns the callback URL and the browser, which keeps
 * the SSO cookies for what follows (logout).
 */
export async function signInAndApprove(
  baseUrl: string,
  authorizationUrl: URL,
  user: { email: string; password: string },
  browser: TestAgent = request.agent(baseUrl),
): Promise<{ callback: URL; browser: TestAgent }> {
  const path = authorizationUrl.pathname + authorizationUrl.search;
  const toLogin = await browser.get(path);
  if (toLogin.status !== 302) throw new Error(`authorize answered ${toLogin.status}: ${toLogin.text}`);
  let next = new URL(toLogin.headers.location);
  if (next.pathname === '/login') {
    const loginPage = await browser.get(next.pathname + next.search);
    const csrf = /name="csrf" value="([^"]+)"/.exec(loginPage.text)![1];
    const signedIn = await browser
      .post('/login')
      .type('form')
      .send({ email: user.email, password: user.password, return_to: next.searchParams.get('return_to'), csrf });
    if (signedIn.status !== 303) throw new Error(`login answered ${signedIn.status}`);
    const back = new URL(signedIn.headers.location);
    const again = await browser.get(back.pathname + back.search);
    if (again.status !== 302) throw new Error(`authorize after login answered ${again.status}: ${again.text}`);
    next = new URL(again.headers.location);
  }
  if (next.origin === baseUrl && next.pathname === '/consent') {
    const consentPage = await browser.get(next.pathname + next.search);
    const csrf = /name="csrf" value="([^"]+)"/.exec(consentPage.text)![1];
    const approved = await browser
      .post('/consent')
      .type('form')
      .send({ request_id: next.searchParams.get('request_id'), decision: 'approve', csrf });
    if (approved.status !== 303) throw new Error(`consent answered ${approved.status}`);
    next = new URL(approved.headers.location);
  }
  return { callback: next, browser };
}
