/**
 * The closed list of error codes a client can see (CONTRACT §2). A shipped code is never renamed.
 */
export const ERROR_STATUS = {
  validation_error: 400,
  invalid_target: 400,
  invalid_credentials: 401,
  // CONTRACT §10: 401 at sign-in (with mfa_token and methods), 403 from the MFA_REQUIRED_FOR_ADMINS policy.
  mfa_required: 401,
  unauthorized: 401,
  forbidden: 403,
  // CONTRACT §11: a factor change without a recent sign-in or a proof in the request; a wrong proof from a signed-in
  // caller (not 401: that tells a client to refresh its token and retry, spec §7).
  reauthentication_required: 403,
  reauthentication_failed: 403,
  // CONTRACT §15: REGISTRATION=closed; accounts come only from administrators.
  registration_closed: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  too_many_attempts: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * What a refusal says, as a key of the catalogues' `validation` section and its parameters (src/i18n `say`): the
 * HTML faces show it in the page's language; the JSON API sends the English `message` only (CONTRACT §2, §18).
 */
export interface Said {
  key: string;
  params?: Readonly<Record<string, string>>;
}

export interface ErrorDetail {
  path: string;
  message: string;
  /** The catalogue key of `message` (never sent: the error writer keeps path, message, row and email). */
  said?: Said;
  /** A bulk import's refusals (docs/passwords.md): the 1-based row and its email as sent. */
  row?: number;
  email?: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly expose: boolean;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;
  /** The catalogue key of `message` for the HTML faces (never sent by the JSON API). */
  readonly said?: Said;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; cause?: unknown; headers?: Record<string, string>; status?: number; said?: Said } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.status = options.status ?? ERROR_STATUS[code];
    this.expose = this.status < 500 || code === 'service_unavailable';
    this.details = options.details;
    this.headers = options.headers;
    this.said = options.said;
  }
}

/**
 * An email link (or login token) that is invalid, expired or already used. On the API it is the contract's
 * 400 validation_error; pages tell it apart from other validation errors by its class.
 */
export class InvalidLinkError extends AppError {
  constructor(message = 'This link is invalid, has expired or was already used') {
    super('validation_error', message);
    this.name = 'InvalidLinkError';
  }
}

export const badRequest = (message: string, details?: ErrorDetail[]) => new AppError('validation_error', message, { details });
export const unauthorized = (message = 'Authentication required', headers?: Record<string, string>) =>
  new AppError('unauthorized', message, headers ? { headers } : {});
export const forbidden = (message = 'You do not have permission to do this') => new AppError('forbidden', message);
export const notFound = (what = 'Resource') => new AppError('not_found', `${what} not found`);
/** The value, or the 404 naming `what` where there is none (a lookup by id that found nothing). */
export function found<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw notFound(what);
  return value;
}
/** A 409: an English message, or a refusal declared with its catalogue key (`conflict(say('emailTaken'))`, src/i18n). */
export const conflict = (refusal: string | { message: string; said?: Said }) =>
  typeof refusal === 'string'
    ? new AppError('conflict', refusal)
    : new AppError('conflict', refusal.message, refusal.said ? { said: refusal.said } : {});
export const serviceUnavailable = (cause?: unknown) =>
  new AppError('service_unavailable', 'The service is temporarily unavailable, try again', { cause });

/** RFC 6749 §5.2 / RFC 7009 / RFC 6750 error codes used by the OAuth endpoints. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'invalid_token'
  | 'server_error'
  | 'temporarily_unavailable'
  // RFC 8707 §2: a resource that is unknown, not an absolute URI, or not allowed for the client.
  | 'invalid_target'
  // RFC 8628 §3.5: the device grant's polling answers.
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  // RFC 7591 §3.2.2: a registration request the server refuses (CONTRACT §13).
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  // OIDC Core 3.1.2.6 (redirected only, never a response status of ours).
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  // RFC 9449 §5, §8: a missing or bad DPoP proof, and the request for a server nonce (issue 34).
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce';

const OAUTH_STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  // RFC 6749 §5.2 / RFC 8628 §3.5: an error response of the token endpoint is a 400 (only invalid_client is 401).
  access_denied: 400,
  invalid_token: 401,
  server_error: 500,
  temporarily_unavailable: 503,
  invalid_target: 400,
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  login_required: 400,
  consent_required: 400,
  interaction_required: 400,
  // At the token endpoint (RFC 9449 §5.0, §8); a protected resource answers 401 with a DPoP challenge instead (§7.1, §9).
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
};

export class OAuthError extends Error {
  readonly status: number;
  readonly headers?: Record<string, string>;

  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    options: { status?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(description, { cause: options.cause });
    this.name = 'OAuthError';
    this.status = options.status ?? OAUTH_STATUS[error];
    this.headers = options.headers;
  }
}

/** RFC 7644 §3.12 Table 9: the `scimType` of a SCIM error (400 and 409 answers). */
export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

/** A contract error that also names its SCIM `scimType` (raised by the SCIM services, CONTRACT §20). */
export class ScimError extends AppError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly scimType?: ScimType,
    options: { status?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(code, message, options);
    this.name = 'ScimError';
  }
}

/** The media type of every SCIM answer, errors included (RFC 7644 §3.1). */
export const SCIM_MEDIA_TYPE = 'application/scim+json';

/**
 * An error as the SCIM endpoints answer it (RFC 7644 §3.12): `{ schemas: [Error], status: "400", scimType?, detail }`
 * with `application/scim+json`. Made by the SCIM scope's boundary (src/routes/scim/scim-errors.ts) from any error.
 */
export class ScimProblem extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly scimType?: ScimType,
    readonly headers?: Record<string, string>,
    options: { cause?: unknown } = {},
  ) {
    super(detail, { cause: options.cause });
    this.name = 'ScimProblem';
  }
}
