/**
 * Client ID Metadata Documents (CONTRACT §13; IETF draft-ietf-oauth-client-id-metadata-document, MCP 2025-11-25
 * authorization) as pure rules: which client_ids are document URLs, what a fetched document must say, and how long it
 * may be cached. The fetching (and its SSRF defences) is client-metadata.service.ts over lib/outbound-http.ts.
 * test/unit/metadata-document-policy.test.ts checks these as tables.
 */
import { nameProblem } from '../../../lib/names';
import { checkRedirectUri } from '../../../lib/redirect-uri';
import { isOneOf } from '../../../lib/one-of';

/** CONTRACT §13: what an `open` registration (and so a metadata-document client) may ask for besides resources. */
export const OPEN_REGISTRATION_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;

/** The grants a metadata-document client may use: it is public, so never client_credentials; no device grant. */
const METADATA_DOCUMENT_GRANTS = ['authorization_code', 'refresh_token'] as const;

/** Longest client_id URL accepted (the row's primary key, shown on consent). */
export const METADATA_DOCUMENT_URL_MAX_LENGTH = 2048;
/** CONTRACT §13: 5 s and 64 KB. */
export const METADATA_DOCUMENT_TIMEOUT_MS = 5_000;
export const METADATA_DOCUMENT_MAX_BYTES = 64 * 1024;
/** CONTRACT §13: cached per Cache-Control up to 24 h; without caching headers, this long. */
export const METADATA_DOCUMENT_MAX_CACHE_S = 24 * 3600;
export const METADATA_DOCUMENT_DEFAULT_CACHE_S = 300;
const MAX_REDIRECT_URIS = 20;

/**
 * Whether a client_id names a metadata document (rather than a registered client): an https URL. Only such ids go
 * to the fetcher; every id this server generates is opaque, so the two never collide.
 */
export function isMetadataDocumentClientId(clientId: string): boolean {
  return /^https:\/\//i.test(clientId);
}

export type Verdict<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * The draft's §3 rules for the client_id URL itself: https, a path, no fragment, no credentials, no dot segments.
 * The URL is compared with the document's `client_id` as the exact string sent, so nothing here normalises it.
 */
export function checkMetadataDocumentUrl(clientId: string): Verdict<URL> {
  if (clientId.length > METADATA_DOCUMENT_URL_MAX_LENGTH) return { ok: false, reason: 'client_id URL is too long' };
  if (/[\s\x00-\x1f\x7f\\]/.test(clientId)) return { ok: false, reason: 'client_id URL contains whitespace or control characters' };
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return { ok: false, reason: 'client_id is not a valid URL' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'a metadata document client_id must be an https URL' };
  if (url.username || url.password || /^https:\/\/[^/]*@/i.test(clientId)) {
    return { ok: false, reason: 'client_id URL must not contain credentials' };
  }
  if (clientId.includes('#')) return { ok: false, reason: 'client_id URL must not contain a fragment' };
  const rawPath = /^https:\/\/[^/?]*(\/[^?]*)?/i.exec(clientId)?.[1] ?? '';
  if (rawPath === '' || rawPath === '/') return { ok: false, reason: 'client_id URL must have a path' };
  if (rawPath.split('/').some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) {
    return { ok: false, reason: 'client_id URL must not contain dot segments' };
  }
  return { ok: true, value: url };
}

/** What this server keeps of a valid document: the registration of a public client. */
export interface MetadataDocumentClient {
  clientId: string;
  /** `client_name`, or the URL's host when the document names none. */
  name: string;
  /** The URL's host, shown next to the name on consent (CONTRACT §13). */
  host: string;
  redirectUris: string[];
  grantTypes: string[];
  scopes: string[];
  /**
   * Issue 34: a document that declares `token_endpoint_auth_method: private_key_jwt` with a `jwks_uri` makes a
   * confidential client that authenticates with assertions signed by a key published there; undefined for a public one.
   */
  jwksUri?: string;
  /** Issue 34, RFC 9449 §5.2: the document requires DPoP-bound access tokens. */
  dpopBoundAccessTokens?: boolean;
}

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function httpsUrlProblem(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') return `${field} must be a string`;
  try {
    if (new URL(value).protocol === 'https:' && !/[\s\x00-\x1f\x7f]/.test(value)) return undefined;
  } catch {
    // falls through
  }
  return `${field} must be an https URL`;
}

/**
 * The document at `clientId` (already parsed as JSON) judged as CONTRACT §13 says: its `client_id` equals the URL
 * exactly; it is a public client (`token_endpoint_auth_method` none, no secret); redirect URIs https or loopback
 * (the rules of an `open` registration); a one-line name; only the code and refresh grants; logo and client URIs
 * https. Scopes: those of an `open` registration, narrowed to the document's `scope` when it names one.
 */
export function checkMetadataDocument(clientId: string, document: unknown): Verdict<MetadataDocumentClient> {
  const fail = (reason: string): Verdict<MetadataDocumentClient> => ({ ok: false, reason });
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return fail('the document is not a JSON object');
  const d = document as Record<string, unknown>;
  if (d.client_id !== clientId) return fail('the document’s client_id differs from its URL');

  if (!isStringArray(d.redirect_uris) || d.redirect_uris.length === 0) return fail('redirect_uris must be a non-empty array of strings');
  if (d.redirect_uris.length > MAX_REDIRECT_URIS) return fail(`at most ${MAX_REDIRECT_URIS} redirect_uris`);
  for (const uri of d.redirect_uris) {
    const check = checkRedirectUri(uri);
    if (!check.ok) return fail(`redirect_uris: ${check.reason}`);
  }

  const method = d.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none' && method !== 'private_key_jwt')
    return fail('token_endpoint_auth_method must be none or private_key_jwt (a metadata document carries no secret)');
  let jwksUri: string | undefined;
  if (method === 'private_key_jwt') {
    if (d.jwks !== undefined) return fail('a metadata document declares its keys with jwks_uri, not jwks');
    const uri = httpsUrlProblem('jwks_uri', d.jwks_uri);
    if (uri || typeof d.jwks_uri !== 'string') return fail(uri ?? 'private_key_jwt needs a jwks_uri');
    if (d.jwks_uri.length > 2048 || d.jwks_uri.includes('#')) return fail('jwks_uri must be an https URL without a fragment');
    jwksUri = d.jwks_uri;
  } else if (d.jwks !== undefined || d.jwks_uri !== undefined) {
    return fail('jwks and jwks_uri are for private_key_jwt clients');
  }
  if (d.client_secret !== undefined || d.client_secret_expires_at !== undefined)
    return fail('a metadata document must not carry a client secret');

  let grantTypes: string[] = [...METADATA_DOCUMENT_GRANTS];
  if (d.grant_types !== undefined) {
    if (!isStringArray(d.grant_types)) return fail('grant_types must be an array of strings');
    const unknown = d.grant_types.find((g) => !isOneOf(METADATA_DOCUMENT_GRANTS, g));
    if (unknown !== undefined) return fail(`grant type ${unknown} is not available to a metadata document client`);
    if (!d.grant_types.includes('authorization_code')) return fail('grant_types must include authorization_code');
    grantTypes = METADATA_DOCUMENT_GRANTS.filter((g) => (d.grant_types as string[]).includes(g));
  }
  if (d.response_types !== undefined && !(isStringArray(d.response_types) && d.response_types.every((r) => r === 'code'))) {
    return fail('response_types may only contain code');
  }

  const url = new URL(clientId);
  let name = url.host;
  if (d.client_name !== undefined) {
    if (typeof d.client_name !== 'string') return fail('client_name must be a string');
    const problem = nameProblem(d.client_name.trim());
    if (problem) return fail(`client_name ${problem}`);
    name = d.client_name.trim();
  }
  for (const field of ['client_uri', 'logo_uri', 'policy_uri', 'tos_uri'] as const) {
    const problem = httpsUrlProblem(field, d[field]);
    if (problem) return fail(problem);
  }

  const dpop = d.dpop_bound_access_tokens;
  if (dpop !== undefined && typeof dpop !== 'boolean') return fail('dpop_bound_access_tokens must be a boolean');

  let scopes: string[] = [...OPEN_REGISTRATION_SCOPES];
  if (d.scope !== undefined) {
    if (typeof d.scope !== 'string') return fail('scope must be a string');
    const asked = new Set(d.scope.split(' ').filter(Boolean));
    scopes = OPEN_REGISTRATION_SCOPES.filter((s) => asked.has(s));
  }
  return {
    ok: true,
    value: {
      clientId,
      name,
      host: url.host,
      redirectUris: [...d.redirect_uris],
      grantTypes,
      scopes,
      ...(jwksUri ? { jwksUri } : {}),
      ...(dpop ? { dpopBoundAccessTokens: true } : {}),
    },
  };
}

/**
 * How long a fetched document may be reused (RFC 9111 §5.2.2): `no-store` and `no-cache` not at all, `max-age` up
 * to 24 h (CONTRACT §13), a malformed `max-age` not at all, no directive a default of 5 minutes. Seconds; 0 = do not
 * cache.
 */
export function cacheLifetimeSeconds(cacheControl: string | null | undefined): number {
  if (!cacheControl) return METADATA_DOCUMENT_DEFAULT_CACHE_S;
  const directives = new Map<string, string | undefined>();
  for (const part of cacheControl.split(',')) {
    const [key, ...rest] = part.trim().split('=');
    if (!key) continue;
    directives.set(key.toLowerCase(), rest.length ? rest.join('=').trim().replace(/^"|"$/g, '') : undefined);
  }
  if (directives.has('no-store') || directives.has('no-cache')) return 0;
  const maxAge = directives.get('max-age');
  if (maxAge !== undefined) {
    if (!/^\d+$/.test(maxAge)) return 0;
    return Math.min(Number(maxAge), METADATA_DOCUMENT_MAX_CACHE_S);
  }
  return METADATA_DOCUMENT_DEFAULT_CACHE_S;
}
