import type { BackchannelDeliveryRow } from '../../db/repositories/backchannel-logout.repo';
import type { ApiResourceRow } from '../../db/repositories/api-resources.repo';
import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import type { RegistrationTokenRow } from '../../db/repositories/registration-tokens.repo';
import type { AdminSummary } from '../../services/admin.service';

/** One back-channel logout delivery (issue 34), field by field. */
export function presentBackchannelDelivery(d: BackchannelDeliveryRow) {
  return {
    id: d.id,
    user_id: d.userId,
    sid: d.sid,
    status: d.status,
    attempts: d.attempts,
    last_attempt_at: d.lastAttemptAt?.toISOString() ?? null,
    last_response_status: d.lastResponseStatus,
    last_error: d.lastError,
    next_attempt_at: d.status === 'pending' ? (d.nextAttemptAt?.toISOString() ?? null) : null,
    delivered_at: d.deliveredAt?.toISOString() ?? null,
    created_at: d.createdAt.toISOString(),
  };
}

/** OAuth client (CONTRACT §6). Listed field by field: the secret hash can never appear (spec §2.6). */
export function presentClient(client: OAuthClientRow) {
  return {
    client_id: client.clientId,
    name: client.name,
    redirect_uris: client.redirectUris,
    scopes: client.scopes,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    is_active: client.isActive,
    // CONTRACT §12's fields, on every client (one shape whatever the kind; the spec's fields are all still there).
    type: client.type,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    // Issue 34: the public keys of a private_key_jwt client (one of the two), null otherwise.
    jwks: client.jwks,
    jwks_uri: client.jwksUri,
    require_pushed_authorization_requests: client.requirePushedAuthorizationRequests,
    backchannel_logout_uri: client.backchannelLogoutUri,
    backchannel_logout_session_required: client.backchannelLogoutSessionRequired,
    dpop_bound_access_tokens: client.dpopBoundAccessTokens,
    grant_types: client.grantTypes,
    allowed_resources: client.allowedResources,
    allowed_origins: client.corsOrigins,
    allowed_origins_default: client.allowedOrigins === null,
    registration: client.registration,
    created_at: client.createdAt.toISOString(),
    updated_at: client.updatedAt.toISOString(),
  };
}

/** Initial access token (CONTRACT §13): its metadata, never the token or its hash. */
export function presentRegistrationToken(token: RegistrationTokenRow) {
  return {
    id: token.id,
    created_by: token.createdBy,
    max_uses: token.maxUses,
    uses: token.uses,
    created_at: token.createdAt,
    expires_at: token.expiresAt,
    revoked_at: token.revokedAt,
  };
}

/** API resource (CONTRACT §12). */
export function presentApiResource(resource: ApiResourceRow) {
  return {
    id: resource.id,
    identifier: resource.identifier,
    name: resource.name,
    scopes: resource.scopes,
    access_token_ttl_s: resource.accessTokenTtlSeconds,
    open_registration: resource.openRegistration,
    dpop_bound_access_tokens: resource.dpopBoundAccessTokens,
    role_based_access: resource.roleBasedAccess,
    created_at: resource.createdAt.toISOString(),
    updated_at: resource.updatedAt.toISOString(),
  };
}

export function presentSummary(summary: AdminSummary) {
  return {
    users: summary.users,
    active_users: summary.activeUsers,
    clients: summary.clients,
    active_clients: summary.activeClients,
    roles: summary.roles,
    admins: summary.admins,
  };
}

/** A published signing key: its id, algorithm and dates, never a key's material. */
export function presentSigningKey(k: { kid: string; alg: string; createdAt: Date; retiredAt: Date | null }) {
  return { kid: k.kid, alg: k.alg, created_at: k.createdAt.toISOString(), retired_at: k.retiredAt?.toISOString() ?? null };
}
