import { z } from 'zod';

/** One parameter: a single string (sent twice it is an array: refused), at most `max` characters. */
const param = (name: string, max: number, description: string) =>
  z
    .string({ error: `${name} must be a single string` })
    .max(max, `${name} is too long`)
    .optional()
    .meta({ description });

/**
 * The parameters of an authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, RFC 8707, RFC 9449 §10, OpenID Connect),
 * declared once, each at most once and as a string: the query of /api/oauth/authorize is documented from it (with
 * `client_id` and `request_uri` beside them), a pushed request (RFC 9126, POST /api/oauth/par) takes exactly these
 * from its body, stores them, and is read back through this schema before /api/oauth/authorize judges them.
 *
 * Why a pushed request keeps its parameters rather than the grant context (db/repositories/authorization-context.ts):
 * the context is what an authorization request BECOMES once the person behind the browser is known (auth_time, amr and
 * the browser session come from the sign-in that may happen between the push and the authorize request; prompt,
 * max_age and login_hint decide that sign-in), and authorize must judge the pushed request again by its own rules when
 * it is used (the client's registration, its APIs and the person's grant can change in between). So PAR stores what
 * authorize reads, checked against this one schema, and the pending request or code it leads to stores the context.
 */
export const authorizationRequestParams = z.strictObject({
  response_type: param('response_type', 100, 'code'),
  redirect_uri: param('redirect_uri', 2048, 'One of the registered redirect URIs, exactly'),
  scope: param('scope', 1024, 'Space-separated scopes within the client’s'),
  state: param('state', 2048, 'Returned unchanged with the code'),
  code_challenge: param('code_challenge', 128, 'PKCE: BASE64URL(SHA-256(code_verifier))'),
  code_challenge_method: param('code_challenge_method', 20, 'S256'),
  nonce: param('nonce', 2048, 'OpenID Connect: echoed in the id_token'),
  prompt: param('prompt', 100, 'OpenID Connect: none, login or consent (space-separated)'),
  max_age: param('max_age', 20, 'OpenID Connect: seconds since the last sign-in beyond which the user signs in again'),
  login_hint: param('login_hint', 500, 'OpenID Connect: prefills the email on the login page'),
  resource: param('resource', 2048, 'RFC 8707: a registered API the client is allowed; its token is then an RFC 9068 JWT'),
  ui_locales: param('ui_locales', 256, 'OpenID Connect: the language of the login and consent pages (en or de)'),
  dpop_jkt: param(
    'dpop_jkt',
    100,
    'RFC 9449 §10: the SHA-256 JWK thumbprint of the client’s DPoP key; the code is then exchanged only with a DPoP proof of that key',
  ),
});

export type AuthorizationRequestParams = z.infer<typeof authorizationRequestParams>;

/** The names of authorizationRequestParams, in its order. */
export const AUTHORIZATION_REQUEST_PARAMS = authorizationRequestParams.keyof().options;
