/**
 * What travels with a grant, declared once (after node-oidc-provider's `storesAuth`): from the pending authorization
 * request (the consent screen) or the device authorization, through the authorization code, to the tokens and the
 * OAuth session the refresh token rotates. Each of those rows carries these fields under the same names and columns.
 */
export interface AuthorizationContext {
  /** The scopes asked for (space-separated), narrowed by consent and the client's and resource's scopes. */
  scope: string;
  /** RFC 8707: the API named at authorize or device authorization, if any (CONTRACT §12). */
  resource: string | null;
  /** OIDC: the authorize request's nonce (none for the device flow). */
  nonce: string | null;
  /** OIDC `auth_time`: when the browser session last proved who the user is. */
  authTime: Date | null;
  /** OIDC `amr`: how it did (CONTRACT §10). */
  amr: string[] | null;
  /** Back-Channel Logout: the browser session that approved (none for the device flow); the session the code opens belongs to it. */
  browserSessionId: string | null;
  /** RFC 9449 §10: the thumbprint of the DPoP key the code is bound to (pending authorizations and codes only). */
  dpopJkt: string | null;
}

/** The columns of an AuthorizationContext as the tables store them (`amr` is jsonb, read back parsed or as text). */
export interface AuthorizationContextRecord {
  scope: string;
  resource: string | null;
  nonce?: string | null;
  auth_time: Date | string | null;
  amr: string[] | string | null;
  /** Pending authorizations and codes only. */
  browser_session_id?: string | null;
  /** Pending authorizations and codes only. */
  dpop_jkt?: string | null;
}

/** An AuthorizationContext read from its columns. */
export function authorizationContextOf(r: AuthorizationContextRecord): AuthorizationContext {
  return {
    scope: r.scope,
    resource: r.resource ?? null,
    nonce: r.nonce ?? null,
    authTime: r.auth_time ? new Date(r.auth_time) : null,
    amr: typeof r.amr === 'string' ? parseAmr(r.amr) : r.amr,
    browserSessionId: r.browser_session_id ?? null,
    dpopJkt: r.dpop_jkt ?? null,
  };
}

function parseAmr(text: string): string[] {
  const parsed: unknown = JSON.parse(text);
  return Array.isArray(parsed) ? parsed.filter((m): m is string => typeof m === 'string') : [];
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
