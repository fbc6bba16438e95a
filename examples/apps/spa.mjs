// A single-page app's sign-in with oauth4webapi, which runs unchanged in the browser: a PUBLIC client (no secret,
// token_endpoint_auth_method none), authorization code + PKCE S256, an optional RFC 8707 `resource` so that the
// access token is an RFC 9068 JWT for your API. In a browser, keep the verifier in sessionStorage between
// startSignIn() (before redirecting) and finishSignIn() (on the redirect URI page).
import * as oauth from 'oauth4webapi';

/** Discovery (OpenID Connect): the endpoints and the issuer id_tokens must name. */
export async function discover(issuerUrl, { insecure = false } = {}) {
  const issuer = new URL(issuerUrl);
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', [oauth.allowInsecureRequests]: insecure });
  return oauth.processDiscoveryResponse(issuer, response);
}

/** Step 1: the URL to send the browser to, and what to keep until it comes back. */
export async function startSignIn(as, { clientId, redirectUri, scope = 'openid profile email', resource }) {
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope,
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    ...(resource ? { resource } : {}),
  }).toString();
  return { url, keep: { codeVerifier, state, nonce } };
}

/** Step 2, on the redirect URI: checks state, exchanges the code with the PKCE verifier, validates the id_token. */
export async function finishSignIn(as, { clientId, redirectUri, resource, insecure = false }, callbackUrl, keep) {
  const client = { client_id: clientId };
  const params = oauth.validateAuthResponse(as, client, new URL(callbackUrl), keep.state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, keep.codeVerifier, {
    [oauth.allowInsecureRequests]: insecure,
    ...(resource ? { additionalParameters: { resource } } : {}),
  });
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: keep.nonce, requireIdToken: true });
  return { tokens, claims: oauth.getValidatedIdTokenClaims(tokens) };
}

/** Later: a new access token (for the API again: send the same resource). */
export async function refresh(as, { clientId, resource, insecure = false }, refreshToken) {
  const client = { client_id: clientId };
  const response = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, {
    [oauth.allowInsecureRequests]: insecure,
    ...(resource ? { additionalParameters: { resource } } : {}),
  });
  return oauth.processRefreshTokenResponse(as, client, response);
}
