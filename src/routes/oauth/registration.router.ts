import { bearerTokenOf } from '../../middleware/authenticate';
import type { RegisteredClient } from '../../services/oauth/registration/registration.service';
import {
  deleteRegistration,
  readRegistration,
  registerClient,
  registrationOff,
  updateRegistration,
} from '../../services/oauth/registration/registration.service';
import { formatScope } from '../../services/oauth/scopes';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import {
  clientInformationBody,
  clientMetadataBody,
  clientMetadataUpdateBody,
  registrationClientParams,
  registrationInvalid,
} from '../../wire/oauth/registration.schemas';

/** RFC 7591 §3.2.1 / RFC 7592 §3, field by field (the secret only when just created; never a hash). */
function presentClientInformation(baseUrl: string, registered: RegisteredClient) {
  const { client } = registered;
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(registered.clientSecret !== undefined ? { client_secret: registered.clientSecret } : {}),
    ...(registered.clientSecret !== undefined || client.tokenEndpointAuthMethod === 'client_secret_basic'
      ? { client_secret_expires_at: 0 as const }
      : {}),
    registration_access_token: registered.registrationAccessToken,
    registration_client_uri: `${baseUrl}/api/oauth/register/${encodeURIComponent(client.clientId)}`,
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: client.grantTypes.includes('authorization_code') ? ['code'] : [],
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    ...(client.jwks ? { jwks: client.jwks } : {}),
    ...(client.jwksUri ? { jwks_uri: client.jwksUri } : {}),
    ...(client.requirePushedAuthorizationRequests ? { require_pushed_authorization_requests: true } : {}),
    ...(client.backchannelLogoutUri
      ? {
          backchannel_logout_uri: client.backchannelLogoutUri,
          backchannel_logout_session_required: client.backchannelLogoutSessionRequired,
        }
      : {}),
    ...(client.dpopBoundAccessTokens ? { dpop_bound_access_tokens: true } : {}),
    scope: formatScope(client.scopes),
    ...(client.clientUri ? { client_uri: client.clientUri } : {}),
    ...(client.logoUri ? { logo_uri: client.logoUri } : {}),
    allowed_origins: client.corsOrigins,
  };
}

/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592), CONTRACT §13. Mounted in the OAuth protocol
 * scope: every error reads `{ error, error_description }` (RFC 7591 §3.2.2, RFC 6750 §3.1). With CLIENT_REGISTRATION=off
 * each route answers 404. Answers carry secrets or the registration access token: never cached.
 */
export function createRegistrationRouter(deps: RouteDeps) {
  const app = deps.ctx;
  const baseUrl = app.config.baseUrl;
  // With registration off (CONTRACT §18: the setting in force now), a malformed request is refused as the endpoint is: not found.
  const invalid: typeof registrationInvalid = (issues, where) =>
    app.settings.current.values.client_registration === 'off' ? registrationOff() : registrationInvalid(issues, where);

  return declareRouter(
    deps,
    [
      route(
        {
          method: 'post',
          path: '/register',
          summary: 'Register a client (RFC 7591); 404 when CLIENT_REGISTRATION=off',
          description:
            'CLIENT_REGISTRATION=token: `Authorization: Bearer <initial access token>` (minted with POST /api/admin/registration-tokens; ' +
            'each registration spends one use). `open`: anyone, for public clients (`token_endpoint_auth_method: none`) with loopback ' +
            'or https redirect URIs, the authorization_code and refresh_token grants, and scopes among openid, profile, email, ' +
            'offline_access and those of API resources marked open_registration. Errors (RFC 7591 §3.2.2): 400 invalid_redirect_uri, ' +
            'invalid_client_metadata; 401 invalid_token. Rate limited per IP (CLIENT_REGISTRATION_RATE_LIMIT_MAX per ' +
            'CLIENT_REGISTRATION_RATE_LIMIT_WINDOW_MS).',
          auth: 'token',
          noStore: true,
          rateLimit: 'registration',
          body: clientMetadataBody,
          invalid,
          response: { status: 201, description: 'RFC 7591 §3.2.1 client information response', schema: clientInformationBody },
          errors: [401, 404],
        },
        async ({ body, ctx }, req) =>
          presentClientInformation(baseUrl, await registerClient(ctx, { metadata: body, initialAccessToken: bearerTokenOf(req) })),
      ),
      route(
        {
          method: 'get',
          path: '/register/:clientId',
          summary: 'Read a registration (RFC 7592 §2.1) with its registration access token',
          auth: 'token',
          noStore: true,
          params: registrationClientParams,
          invalid,
          response: { description: 'RFC 7592 §3 client information response (no client_secret)', schema: clientInformationBody },
          errors: [401],
        },
        async ({ params, ctx }, req) => presentClientInformation(baseUrl, await readRegistration(ctx, params.clientId, bearerTokenOf(req))),
      ),
      route(
        {
          method: 'put',
          path: '/register/:clientId',
          summary: 'Replace a registration (RFC 7592 §2.2) with its registration access token',
          description:
            'The metadata sent replaces the registration (omitted fields take their defaults) under the rules of the current ' +
            'CLIENT_REGISTRATION mode, or of `open` when the client registered openly; token_endpoint_auth_method cannot change.',
          auth: 'token',
          noStore: true,
          params: registrationClientParams,
          body: clientMetadataUpdateBody,
          invalid,
          response: { description: 'RFC 7592 §3 client information response', schema: clientInformationBody },
          errors: [401],
        },
        async ({ params, body, ctx }, req) =>
          presentClientInformation(baseUrl, await updateRegistration(ctx, params.clientId, bearerTokenOf(req), body)),
      ),
      route(
        {
          method: 'delete',
          path: '/register/:clientId',
          summary: 'Delete a registration (RFC 7592 §2.3): the client, its tokens and sessions stop working',
          auth: 'token',
          noStore: true,
          params: registrationClientParams,
          invalid,
          response: { status: 204, description: 'Deleted', kind: 'empty' },
          errors: [401],
        },
        async ({ params, ctx }, req) => {
          await deleteRegistration(ctx, params.clientId, bearerTokenOf(req));
        },
      ),
    ],
    { tags: ['OAuth 2.0'] },
  );
}
