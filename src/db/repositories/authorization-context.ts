import { z } from 'zod';
import { OAuthError } from '../../errors';
import { jsonColumnValue } from '../../lib/json-text';

/** RFC 6749 §3.3: scope-tokens separated by single spaces (none: the empty string). */
const SCOPE_PATTERN = /^(?:[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*)?$/;
/** RFC 8176 method names as this server writes them (pwd, otp, hwk, rec, fed). */
const AMR_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** RFC 7638: a base64url SHA-256 thumbprint. */
const JKT_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const nullableText = (check?: RegExp) => (check ? z.string().regex(check) : z.string()).nullish().transform((v) => v ?? null);

/**
 * What travels with a grant, declared once (after node-oidc-provider's `storesAuth`): from the pending authorization
 * request (the consent screen) or the device authorization, through the authorization code, to the tokens and the
 * OAuth session the refresh token rotates. Each of those rows carries these fields under the same names and columns,
 * and every read of them goes through this one schema: a row that does not parse (a corrupted or hand-edited
 * context) is refused as `invalid_grant` (authorizationContextOf), never cast and passed on.
 *
 * The columns, snake_case as stored, and what they become:
 * - `scope` → scope: the scopes asked for (space-separated), narrowed by consent and the client's and resource's scopes;
 * - `resource` → resource: RFC 8707, the API named at authorize or device authorization, if any (CONTRACT §12);
 * - `nonce` → nonce: OIDC, the authorize request's nonce (none for the device flow);
 * - `auth_time` → authTime: OIDC, when the browser session last proved who the user is;
 * - `amr` → amr: OIDC, how it did (CONTRACT §10); text[] or jsonb, read back parsed or as text;
 * - `browser_session_id` → browserSessionId: Back-Channel Logout, the browser session that approved (none for the
 *   device flow); the session the code opens belongs to it;
 * - `dpop_jkt` → dpopJkt: RFC 9449 §10, the thumbprint of the DPoP key the code is bound to (pending authorizations
 *   and codes only).
 */
export const storedAuthorizationContext = z
  .object({
    scope: z.string().regex(SCOPE_PATTERN),
    resource: nullableText(),
    nonce: nullableText(),
    auth_time: z
      .union([z.date(), z.string()])
      .nullish()
      .transform((v) => (v ? new Date(v) : null))
      .refine((d) => d === null || !Number.isNaN(d.getTime())),
    amr: z.preprocess(
      jsonColumnValue,
      z
        .array(z.string().regex(AMR_PATTERN))
        .min(1)
        .nullish()
        .transform((v) => v ?? null),
    ),
    browser_session_id: nullableText(),
    dpop_jkt: nullableText(JKT_PATTERN),
  })
  .transform((r) => ({
    scope: r.scope,
    resource: r.resource,
    nonce: r.nonce,
    authTime: r.auth_time,
    amr: r.amr,
    browserSessionId: r.browser_session_id,
    dpopJkt: r.dpop_jkt,
  }));

/** The context a grant carries (see storedAuthorizationContext: the type is what the schema reads). */
export type AuthorizationContext = z.output<typeof storedAuthorizationContext>;

/** The columns of an AuthorizationContext as the tables store them (what storedAuthorizationContext reads). */
export type AuthorizationContextRecord = z.input<typeof storedAuthorizationContext>;

/** A stored context that does not parse: the grant it belongs to is refused as RFC 6749's `invalid_grant` (400). */
export const MALFORMED_CONTEXT = 'The stored authorization is malformed; start a new authorization';

/** An AuthorizationContext read from its columns through the one schema; a malformed one is refused (invalid_grant). */
export function authorizationContextOf(r: unknown): AuthorizationContext {
  const parsed = storedAuthorizationContext.safeParse(r);
  if (!parsed.success) throw new OAuthError('invalid_grant', MALFORMED_CONTEXT, { status: 400, cause: parsed.error });
  return parsed.data;
}

/** A regular expression's source as an SQL string literal (PostgreSQL's regular expressions read these patterns alike). */
const sqlPattern = (pattern: RegExp): string => `'${pattern.source.replaceAll("'", "''")}'`;

/**
 * SQL: the stored context of the session row `alias` would read through storedAuthorizationContext (sessionContextOf):
 * a first-party session (no client) carries none; an OAuth session's scope is scope-tokens and its amr, when set, a
 * non-empty list of method names, by the same patterns. Its other columns are typed by their table (auth_time a
 * timestamptz, resource and browser_session_id text). The one-statement refresh rotation rotates only such a session,
 * so it need not parse the context it does not use (issue 33); a malformed one goes to the transactional path, which
 * reads the row through the schema and refuses it (invalid_grant) before anything is spent.
 */
export function sessionContextIsWellFormed(alias: string): string {
  return `(${alias}.client_id is null or (coalesce(${alias}.scope, '') ~ ${sqlPattern(SCOPE_PATTERN)}
          and (${alias}.amr is null or (cardinality(${alias}.amr) > 0
               and not exists (select from unnest(${alias}.amr) m where m is null or m !~ ${sqlPattern(AMR_PATTERN)})))))`;
}

/** The context columns of a sessions row (an OAuth session keeps no nonce and no DPoP binding of its code). */
export interface SessionContextRecord {
  client_id: string | null;
  scope: string | null;
  resource: string | null;
  auth_time: unknown;
  amr: unknown;
  browser_session_id: string | null;
}

/**
 * The context an OAuth session keeps from the grant that opened it (its scope, resource, auth_time, amr and browser
 * session), read through the same schema; none for a first-party session (no client).
 */
export function sessionContextOf(r: SessionContextRecord): AuthorizationContext | undefined {
  return r.client_id === null ? undefined : authorizationContextOf({ ...r, scope: r.scope ?? '' });
}

/** The columns an AuthorizationContext is stored in (every one written: a pending request and its code carry all). */
export function authorizationContextColumns(c: AuthorizationContext): Record<string, unknown> {
  return {
    scope: c.scope,
    resource: c.resource,
    nonce: c.nonce,
    auth_time: c.authTime,
    amr: c.amr,
    browser_session_id: c.browserSessionId,
    dpop_jkt: c.dpopJkt,
  };
}

/** The context alone, from a row that carries it (a pending request becoming a code passes exactly this on). */
export function contextOf(g: AuthorizationContext): AuthorizationContext {
  return {
    scope: g.scope,
    resource: g.resource,
    nonce: g.nonce,
    authTime: g.authTime,
    amr: g.amr,
    browserSessionId: g.browserSessionId,
    dpopJkt: g.dpopJkt,
  };
}

/**
 * What a pending authorization (the consent screen's) and the authorization code it becomes share besides the
 * context: whose, for which client, where the answer goes, the PKCE challenge and the lifetime.
 */
export interface PendingGrant extends AuthorizationContext {
  clientId: string;
  userId: string;
  redirectUri: string;
  codeChallenge: string;
  createdAt: Date;
  expiresAt: Date;
}

/** The columns of a PendingGrant (oauth_authorization_requests, oauth_codes). */
export interface PendingGrantRecord extends AuthorizationContextRecord {
  client_id: string;
  user_id: string;
  redirect_uri: string;
  code_challenge: string;
  created_at: Date;
  expires_at: Date;
}

export function pendingGrantOf(r: PendingGrantRecord): PendingGrant {
  return {
    clientId: r.client_id,
    userId: r.user_id,
    redirectUri: r.redirect_uri,
    ...authorizationContextOf(r),
    codeChallenge: r.code_challenge,
    createdAt: new Date(r.created_at),
    expiresAt: new Date(r.expires_at),
  };
}

/** A PendingGrant to store: whose, for which client, where the answer goes, PKCE, and the context it carries. */
export interface NewPendingGrant {
  clientId: string;
  userId: string;
  redirectUri: string;
  codeChallenge: string;
  now: Date;
  expiresAt: Date;
  context: AuthorizationContext;
}

/** The columns written for a NewPendingGrant. */
export function pendingGrantColumns(g: NewPendingGrant): Record<string, unknown> {
  return {
    client_id: g.clientId,
    user_id: g.userId,
    redirect_uri: g.redirectUri,
    code_challenge: g.codeChallenge,
    ...authorizationContextColumns(g.context),
    created_at: g.now,
    expires_at: g.expiresAt,
  };
}
