import { z } from 'zod';
import { authorizationRequestParams } from '../../declarations/authorization-request';

const param = (name: string, max = 4096) =>
  z
    .string({ error: `${name} must be a single string` })
    .max(max, `${name} is too long`)
    .optional();

/**
 * Client credentials in the body (client_secret_post, or private_key_jwt's assertion, RFC 7523 §2.2); their shape is
 * judged by client authentication.
 */
const clientCredentials = {
  client_id: z.unknown().optional().meta({ type: 'string' }),
  client_secret: z.unknown().optional().meta({ type: 'string', description: 'client_secret_post' }),
  client_assertion: z.unknown().optional().meta({ type: 'string', description: 'private_key_jwt: the signed assertion (RFC 7523)' }),
  client_assertion_type: z
    .unknown()
    .optional()
    .meta({ type: 'string', description: 'private_key_jwt: urn:ietf:params:oauth:client-assertion-type:jwt-bearer' }),
};
type ClientCredentialFields = { client_id?: unknown; client_secret?: unknown; client_assertion?: unknown; client_assertion_type?: unknown };
const clientOf = (p: ClientCredentialFields) => ({
  clientId: p.client_id,
  clientSecret: p.client_secret,
  clientAssertion: p.client_assertion,
  clientAssertionType: p.client_assertion_type,
});

/** Token endpoint parameters (RFC 6749 §4.1.3, §6), form-urlencoded or JSON. */
export const tokenParams = z
  .object({
    grant_type: param('grant_type', 100),
    code: param('code', 512),
    redirect_uri: param('redirect_uri', 2048),
    code_verifier: param('code_verifier', 256),
    refresh_token: param('refresh_token', 8192),
    scope: param('scope', 1024),
    // RFC 8707 §2 (CONTRACT §12): one API per request; a repeated resource is refused as invalid_request.
    resource: param('resource', 2048).meta({ description: 'RFC 8707: the registered API the access token is for (an RFC 9068 JWT)' }),
    device_code: param('device_code', 512).meta({ description: 'RFC 8628: with grant_type urn:ietf:params:oauth:grant-type:device_code' }),
    subject_token: param('subject_token', 8192).meta({ description: 'RFC 8693: the token to exchange (token-exchange grant)' }),
    subject_token_type: param('subject_token_type', 100).meta({
      description: 'RFC 8693: urn:ietf:params:oauth:token-type:access_token or urn:ietf:params:oauth:token-type:id_token',
    }),
    actor_token: param('actor_token', 8192).meta({ description: 'RFC 8693: an access token of the calling client (delegation: act)' }),
    actor_token_type: param('actor_token_type', 100).meta({ description: 'RFC 8693: urn:ietf:params:oauth:token-type:access_token' }),
    requested_token_type: param('requested_token_type', 100).meta({
      description: 'RFC 8693: only urn:ietf:params:oauth:token-type:access_token is issued',
    }),
    audience: param('audience', 2048).meta({ description: 'RFC 8693: an API identifier, as resource (the same one when both are sent)' }),
    ...clientCredentials,
  })
  .transform((p) => ({
    client: clientOf(p),
    request: {
      grantType: p.grant_type,
      code: p.code,
      redirectUri: p.redirect_uri,
      codeVerifier: p.code_verifier,
      refreshToken: p.refresh_token,
      scope: p.scope,
      resource: p.resource,
      deviceCode: p.device_code,
      subjectToken: p.subject_token,
      subjectTokenType: p.subject_token_type,
      actorToken: p.actor_token,
      actorTokenType: p.actor_token_type,
      requestedTokenType: p.requested_token_type,
      audience: p.audience,
    },
  }));

/** RFC 8628 §3.1 device authorization request (CONTRACT §12). */
export const deviceAuthorizationParams = z
  .object({
    scope: param('scope', 1024),
    resource: param('resource', 2048).meta({ description: 'RFC 8707: the registered API the access token is for' }),
    ...clientCredentials,
  })
  .transform((p) => ({ client: clientOf(p), scope: p.scope, resource: p.resource }));

/** RFC 8628 §3.2. */
export const deviceAuthorizationBody = z
  .strictObject({
    device_code: z.string(),
    user_code: z.string().meta({ description: 'XXXX-XXXX from BCDFGHJKLMNPQRSTVWXZ; accepted in any case, with or without the dash' }),
    verification_uri: z.string(),
    verification_uri_complete: z.string(),
    expires_in: z.number().int(),
    interval: z.number().int(),
  })
  .meta({ id: 'DeviceAuthorizationResponse' });

/**
 * RFC 9126 §2.1 (issue 34): an authorization request's parameters (declared once: declarations/authorization-request.ts),
 * pushed with client authentication.
 */
export const parParams = z
  .looseObject({
    ...authorizationRequestParams.shape,
    ...clientCredentials,
  })
  .transform((p) => {
    const { client_id: _id, client_secret: _secret, client_assertion: _assertion, client_assertion_type: _type, ...params } = p;
    return { client: clientOf(p), params };
  });

/** RFC 9126 §2.2. */
export const parResponseBody = z
  .strictObject({
    request_uri: z.string().meta({ description: 'urn:ietf:params:oauth:request_uri:…, for /api/oauth/authorize once' }),
    expires_in: z.literal(60),
  })
  .meta({ id: 'PushedAuthorizationResponse' });

/** RFC 7009 §2.1. */
export const revokeParams = z
  .object({ token: param('token', 8192), token_type_hint: param('token_type_hint', 100), ...clientCredentials })
  .transform((p) => ({
    client: clientOf(p),
    token: p.token,
    tokenTypeHint: p.token_type_hint,
  }));

/** RFC 7662 §2.1. */
export const introspectParams = revokeParams;

/**
 * RP-Initiated Logout 1.0 §2 (GET query or POST form), plus the confirmation form's own fields. A browser page never
 * answers JSON: a repeated or oversized value is treated as absent, and the logout service judges the rest.
 */
const logoutField = (max: number, description: string) =>
  z
    .unknown()
    .transform((v) => (typeof v === 'string' && v.length <= max ? v : undefined))
    .optional()
    .meta({ type: 'string', description });
export const logoutParams = z.object({
  id_token_hint: logoutField(8192, 'An id_token this server issued to the client (an expired one is accepted)'),
  post_logout_redirect_uri: logoutField(2048, "One of the client's registered post_logout_redirect_uris, exactly"),
  state: logoutField(2048, 'Returned unchanged on the post-logout redirect'),
  client_id: logoutField(200, 'The client, when no id_token_hint is sent'),
  confirm: logoutField(10, 'Confirmation form only: yes'),
  csrf: logoutField(100, 'Confirmation form only: the CSRF field'),
});

/** Body of approve / deny and the query of consent-info. */
export const consentRequestBody = z
  .object({ request_id: z.uuid({ error: 'request_id must be a uuid' }) })
  .transform((b) => ({ requestId: b.request_id }));

/**
 * The authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3). Documented here, judged by the authorize service,
 * which must see repeated or missing parameters as sent (an error may only be redirected once the client and
 * redirect URI are verified).
 */
const authorizeParam = (description: string | undefined) => z.unknown().optional().meta({ type: 'string', description });
const { shape } = authorizationRequestParams;
export const authorizeQuery = z.looseObject({
  response_type: authorizeParam(shape.response_type.description),
  client_id: authorizeParam('The registered client'),
  redirect_uri: authorizeParam(shape.redirect_uri.description),
  scope: authorizeParam(shape.scope.description),
  state: authorizeParam(shape.state.description),
  code_challenge: authorizeParam(shape.code_challenge.description),
  code_challenge_method: authorizeParam(shape.code_challenge_method.description),
  nonce: authorizeParam(shape.nonce.description),
  prompt: authorizeParam(shape.prompt.description),
  max_age: authorizeParam(shape.max_age.description),
  login_hint: authorizeParam(shape.login_hint.description),
  resource: authorizeParam(shape.resource.description),
  ui_locales: authorizeParam(shape.ui_locales.description),
  dpop_jkt: authorizeParam(shape.dpop_jkt.description),
  request_uri: authorizeParam('RFC 9126: the request_uri /api/oauth/par answered (with client_id, instead of the other parameters)'),
});

export const tokenResponseBody = z
  .strictObject({
    access_token: z.string(),
    token_type: z
      .enum(['Bearer', 'DPoP'])
      .meta({ description: 'DPoP (RFC 9449) when the request carried a DPoP proof: the token is bound to its key (cnf.jkt)' }),
    expires_in: z.number().int(),
    refresh_token: z.string().optional().meta({ description: 'Absent for client_credentials (RFC 6749 §4.4.3)' }),
    scope: z.string(),
    id_token: z.string().optional().meta({ description: 'Only when the granted scope contains openid (CONTRACT §9)' }),
    issued_token_type: z
      .literal('urn:ietf:params:oauth:token-type:access_token')
      .optional()
      .meta({ description: 'RFC 8693 §2.2.1: token exchange only' }),
  })
  .meta({ id: 'TokenResponse' });

export const userInfoBody = z.strictObject({
  sub: z.string(),
  name: z.string().optional(),
  updated_at: z.number().int().optional(),
  email: z.string().optional(),
  email_verified: z.boolean().optional(),
});

export const consentInfoBody = z.strictObject({
  request_id: z.uuid(),
  client: z.strictObject({ client_id: z.string(), name: z.string() }),
  scopes: z.array(z.string()),
  redirect_uri: z.string(),
  /** CONTRACT §23: the APIs (RFC 8707 resources) the tokens would be for; empty for a sign-in. */
  resources: z.array(z.strictObject({ identifier: z.string(), name: z.string() })),
});

export const redirectUrlBody = z.strictObject({ redirect_url: z.string() });

/** RFC 8414 metadata; further members may be added. */
export const discoveryBody = z.looseObject({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  response_types_supported: z.array(z.string()),
});

/** OpenID Connect Discovery 1.0 metadata (CONTRACT §9); further members may be added. */
export const openIdConfigurationBody = z.looseObject({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  userinfo_endpoint: z.string(),
  jwks_uri: z.string(),
  end_session_endpoint: z.string(),
  introspection_endpoint: z.string(),
  response_types_supported: z.array(z.string()),
  subject_types_supported: z.array(z.string()),
  id_token_signing_alg_values_supported: z.array(z.string()),
});

/** RFC 7517 JWK Set: public keys only. */
export const jwksBody = z.strictObject({
  keys: z.array(z.looseObject({ kty: z.string(), kid: z.string(), alg: z.string(), use: z.literal('sig') })),
});

/** RFC 9449 §6.2: the DPoP key a token is bound to (its RFC 7638 SHA-256 thumbprint). */
const dpopConfirmation = z
  .strictObject({ jkt: z.string() })
  .meta({ description: 'DPoP-bound token (RFC 9449): the thumbprint of the key its proofs must be made with' });

/** RFC 8693 §4.1: the actor of a delegation; earlier actors nest in its own `act`. */
const actClaim = z
  .looseObject({ sub: z.string() })
  .meta({ description: 'RFC 8693 §4.1: who acts for sub (a token exchanged with an actor_token); earlier actors are nested as act.act' });

/** RFC 7662 §2.2 (CONTRACT §9). */
export const introspectionBody = z
  .union([
    z.strictObject({ active: z.literal(false) }),
    z.strictObject({
      active: z.literal(true),
      scope: z.string().nullable().meta({ description: 'null for first-party tokens' }),
      client_id: z.string().nullable().meta({ description: 'null for first-party tokens' }),
      sub: z.string(),
      exp: z.number().int(),
      iat: z.number().int(),
      token_type: z.enum(['Bearer', 'DPoP', 'refresh_token']).meta({ description: 'DPoP: a DPoP-bound access token (RFC 9449 §6.2)' }),
      sid: z.string(),
      cnf: dpopConfirmation.optional(),
    }),
    z
      .strictObject({
        active: z.literal(true),
        scope: z.string(),
        client_id: z.string(),
        sub: z.string().meta({ description: 'The user, or the client itself for client_credentials' }),
        exp: z.number().int(),
        iat: z.number().int(),
        token_type: z.enum(['Bearer', 'DPoP']),
        aud: z.string().meta({ description: 'The API (RFC 8707 resource identifier)' }),
        iss: z.string(),
        jti: z.string(),
        sid: z.string().optional().meta({ description: 'When a user session stands behind the token' }),
        cnf: dpopConfirmation.optional(),
        act: actClaim.optional(),
      })
      .meta({ description: 'An RFC 9068 access token (CONTRACT §12)' }),
  ])
  .meta({ id: 'IntrospectionResponse' });
