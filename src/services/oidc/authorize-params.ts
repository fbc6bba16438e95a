import type { OAuthErrorCode } from '../../errors';
import { isOneOf } from '../../lib/one-of';

/** OIDC Core 3.1.2.1 parameters of an authorization request, beyond RFC 6749's (CONTRACT §9). */
export interface OidcAuthorizeParams {
  nonce?: string;
  prompt: { none: boolean; login: boolean; consent: boolean };
  maxAgeSeconds?: number;
  loginHint?: string;
}

export const PROMPT_VALUES = ['none', 'login', 'consent'] as const;

const MAX_NONCE_LENGTH = 512;
const MAX_LOGIN_HINT_LENGTH = 254;

type Parsed = { ok: true; params: OidcAuthorizeParams } | { ok: false; error: OAuthErrorCode; description: string };

function single(query: Record<string, unknown>, name: string): { ok: true; value?: string } | { ok: false } {
  const value = query[name];
  if (value === undefined) return { ok: true };
  return typeof value === 'string' ? { ok: true, value } : { ok: false };
}

/** Parses nonce, prompt, max_age and login_hint; any problem is invalid_request, redirected with the state. */
export function parseOidcAuthorizeParams(query: Record<string, unknown>): Parsed {
  const fail = (description: string): Parsed => ({ ok: false, error: 'invalid_request', description });
  const nonce = single(query, 'nonce');
  const prompt = single(query, 'prompt');
  const maxAge = single(query, 'max_age');
  const loginHint = single(query, 'login_hint');
  if (!nonce.ok || !prompt.ok || !maxAge.ok || !loginHint.ok) return fail('nonce, prompt, max_age and login_hint must each be sent once');
  if (nonce.value !== undefined && nonce.value.length > MAX_NONCE_LENGTH) return fail('nonce is too long');

  const prompts = new Set((prompt.value ?? '').split(' ').filter(Boolean));
  for (const value of prompts) {
    if (!isOneOf(PROMPT_VALUES, value)) return fail(`prompt value "${value.slice(0, 40)}" is not supported`);
  }
  // OIDC Core 3.1.2.1: none with any other value is an error.
  if (prompts.has('none') && prompts.size > 1) return fail('prompt=none cannot be combined with other values');

  let maxAgeSeconds: number | undefined;
  if (maxAge.value !== undefined) {
    if (!/^\d{1,10}$/.test(maxAge.value)) return fail('max_age must be a non-negative number of seconds');
    maxAgeSeconds = Number(maxAge.value);
  }
  return {
    ok: true,
    params: {
      nonce: nonce.value || undefined,
      prompt: { none: prompts.has('none'), login: prompts.has('login'), consent: prompts.has('consent') },
      maxAgeSeconds,
      loginHint: loginHint.value?.trim().slice(0, MAX_LOGIN_HINT_LENGTH) || undefined,
    },
  };
}

/** True when the browser session's sign-in is too old for this request (prompt=login, or older than max_age). */
export function needsFreshSignIn(params: OidcAuthorizeParams, authTime: Date, now: Date): boolean {
  if (params.prompt.login) return true;
  if (params.maxAgeSeconds === undefined) return false;
  return Math.floor((now.getTime() - authTime.getTime()) / 1000) > params.maxAgeSeconds;
}

/**
 * Where the login page sends the browser back after a forced sign-in: the same authorize request without `login` in
 * `prompt` and without `max_age`, which the fresh sign-in has just satisfied (otherwise max_age=0 would loop). The
 * id_token's auth_time tells the client when the user really signed in (OIDC Core 3.1.2.1: the RP checks it).
 */
export function authorizeUrlAfterSignIn(authorizeUrl: string): string {
  const url = new URL(authorizeUrl);
  url.searchParams.delete('max_age');
  const prompt = (url.searchParams.get('prompt') ?? '').split(' ').filter((p) => p && p !== 'login');
  if (prompt.length > 0) url.searchParams.set('prompt', prompt.join(' '));
  else url.searchParams.delete('prompt');
  return url.toString();
}
