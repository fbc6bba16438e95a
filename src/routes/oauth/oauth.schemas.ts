import { z } from 'zod';

const param = (name: string, max = 4096) =>
  z.string({ error: `${name} must be a single string` }).max(max, `${name} is too long`).optional();

/** Client credentials in the body (client_secret_post); their shape is judged by client authentication. */
const clientCredentials = { client_id: z.unknown().optional(), client_secret: z.unknown().optional() };

/** Token endpoint parameters (RFC 6749 §4.1.3, §6), form-urlencoded or JSON. */
export const tokenParams = z
  .object({
    grant_type: param('grant_type', 100),
    code: param('code', 512),
    redirect_uri: param('redirect_uri', 2048),
    code_verifier: param('code_verifier', 256),
    refresh_token: param('refresh_token', 8192),
    scope: param('scope', 1024),
    ...clientCredentials,
  })
  .transform((p) => ({
    client: { clientId: p.client_id, clientSecret: p.client_secret },
    request: {
      grantType: p.grant_type,
      code: p.code,
      redirectUri: p.redirect_uri,
      codeVerifier: p.code_verifier,
      refreshToken: p.refresh_token,
      scope: p.scope,
    },
  }));

/** RFC 7009 §2.1. */
export const revokeParams = z
  .object({ token: param('token', 8192), token_type_hint: param('token_type_hint', 100), ...clientCredentials })
  .transform((p) => ({
    client: { clientId: p.client_id, clientSecret: p.client_secret },
    token: p.token,
    tokenTypeHint: p.token_type_hint,
  }));

/** Body of approve / deny and the query of consent-info. */
export const consentRequestBody = z
  .object({ request_id: z.uuid({ error: 'request_id must be a uuid' }) })
  .transform((b) => ({ requestId: b.request_id }));

/**
 * The authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3). Documented here, judged by the authorize service,
 * which must see repeated or missing parameters as sent (an error may only be redirected once the client and
 * redirect URI are verified).
 */
const authorizeParam = (description: string) => z.unknown().optional().meta({ type: 'string', description });
export const authorizeQuery = z.looseObject({
  response_type: authorizeParam('code'),
  client_id: authorizeParam('The registered client'),
  redirect_uri: authorizeParam('One of the registered redirect URIs, exactly'),
  scope: authorizeParam('Space-separated scopes within the client’s'),
  state: authorizeParam('Returned unchanged with the code'),
  code_challenge: authorizeParam('PKCE: BASE64URL(SHA-256(code_verifier))'),
  code_challenge_method: authorizeParam('S256'),
});

export const tokenResponseBody = z
  .strictObject({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    refresh_token: z.string(),
    scope: z.string(),
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
});

export const redirectUrlBody = z.strictObject({ redirect_url: z.string() });

/** RFC 8414 metadata; further members may be added. */
export const discoveryBody = z.looseObject({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  response_types_supported: z.array(z.string()),
});
