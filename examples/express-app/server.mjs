// A small third-party web app that signs people in through service-sso with OpenID Connect and a standard client
// library (openid-client): discovery, authorization code + PKCE S256 + nonce, a confidential client
// (client_secret_basic), the id_token checked by the library, userinfo, one refresh on 401, and on sign-out both
// revocation and RP-initiated logout (the browser leaves service-sso signed out too).
// Copy this folder, `npm install`, set the variables below, `npm start`.
//
//   SSO_URL         the OpenID issuer of service-sso: its OIDC_ISSUER, by default its BASE_URL, exactly (no trailing
//                   slash); the library checks that the discovery document names this same issuer
//   CLIENT_ID       from POST /api/admin/oauth-clients
//   CLIENT_SECRET   shown once by that call
//   APP_URL         this app's own base address. Two addresses built from it must be registered on the client, exactly:
//                   APP_URL/callback in redirect_uris and APP_URL/ in post_logout_redirect_uris
//   PORT            where this app listens (default 4000)
import { randomBytes } from 'node:crypto';
import express from 'express';
import * as client from 'openid-client';

const { SSO_URL, CLIENT_ID, CLIENT_SECRET } = process.env;
const PORT = Number(process.env.PORT ?? 4000);
const APP_URL = (process.env.APP_URL ?? `http://localhost:${PORT}`).replace(/\/+$/, '');
if (!SSO_URL || !CLIENT_ID || !CLIENT_SECRET) {
  console.error('Set SSO_URL, CLIENT_ID and CLIENT_SECRET (see the top of server.mjs)');
  process.exit(1);
}
const REDIRECT_URI = `${APP_URL}/callback`;
const POST_LOGOUT_REDIRECT_URI = `${APP_URL}/`;
const SCOPE = 'openid profile email';
// Plain http is for a local try-out only (the library refuses it otherwise).
const insecure = new URL(SSO_URL).protocol === 'http:';

// OpenID Connect Discovery: endpoints, signing keys (jwks_uri) and the issuer the id_token must name.
const config = await client.discovery(
  new URL(SSO_URL),
  CLIENT_ID,
  CLIENT_SECRET,
  undefined,
  insecure ? { execute: [client.allowInsecureRequests] } : undefined,
);
const metadata = config.serverMetadata();

// Sessions: an in-memory map behind a random HttpOnly cookie. Enough for an example; use a real session store
// (express-session with Redis, …) in production.
const sessions = new Map();
const COOKIE = 'example_sid';
function session(req, res) {
  const id = /(?:^|;\s*)example_sid=([A-Za-z0-9_-]{43})/.exec(req.headers.cookie ?? '')?.[1];
  if (id && sessions.has(id)) return sessions.get(id);
  const fresh = randomBytes(32).toString('base64url');
  sessions.set(fresh, {});
  res.cookie(COOKIE, fresh, { httpOnly: true, sameSite: 'lax', secure: APP_URL.startsWith('https:'), path: '/' });
  return sessions.get(fresh);
}

const escape = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (body) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Example app</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}button,a.button{font:inherit;padding:.5rem 1rem}</style>
</head><body>${body}</body></html>`;

/** GET userinfo with the access token; on 401 refresh once (rotation: keep the new refresh token) and retry. */
async function userInfo(s) {
  const call = () => client.fetchProtectedResource(config, s.tokens.access_token, new URL(metadata.userinfo_endpoint), 'GET');
  let res;
  try {
    res = await call();
  } catch (err) {
    // A 401 with a WWW-Authenticate challenge (expired or revoked token) arrives as an error.
    if (err.code !== 'OAUTH_WWW_AUTHENTICATE_CHALLENGE' || err.status !== 401 || !s.tokens.refresh_token) throw err;
    s.tokens = await client.refreshTokenGrant(config, s.tokens.refresh_token);
    // The refresh grant of an openid grant brings a new id_token: keep the latest for sign-out's id_token_hint.
    if (s.tokens.id_token) s.idToken = s.tokens.id_token;
    res = await call();
  }
  if (!res.ok) throw new Error(`userinfo answered ${res.status}`);
  return res.json();
}

const app = express();
app.disable('x-powered-by');

app.get('/', async (req, res) => {
  const s = session(req, res);
  if (!s.tokens) {
    return res.send(
      page(`<h1>Example app</h1><p>You are not signed in.</p><p><a class="button" href="/login">Sign in with service-sso</a></p>`),
    );
  }
  try {
    const user = await userInfo(s);
    res.send(
      page(`<h1>Example app</h1><p>Signed in as <strong>${escape(user.name)}</strong> (${escape(user.email)}).</p>
<p>Account id (id_token <code>sub</code>): <code>${escape(s.claims.sub)}</code>; scope: ${escape(s.tokens.scope)}</p>
<form method="post" action="/logout"><button type="submit">Sign out</button></form>`),
    );
  } catch {
    // The grant was revoked (e.g. the user disconnected the app in their account): start over.
    delete s.tokens;
    res.redirect('/');
  }
});

app.get('/login', async (req, res) => {
  const s = session(req, res);
  s.verifier = client.randomPKCECodeVerifier();
  s.state = client.randomState();
  const params = {
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    state: s.state,
    code_challenge: await client.calculatePKCECodeChallenge(s.verifier),
    code_challenge_method: 'S256',
  };
  params.nonce = s.nonce = client.randomNonce();
  res.redirect(client.buildAuthorizationUrl(config, params).href);
});

app.get('/callback', async (req, res) => {
  const s = session(req, res);
  if (!s.verifier) return res.status(400).send(page('<p>No sign-in in progress. <a href="/">Start again</a></p>'));
  try {
    s.tokens = await client.authorizationCodeGrant(config, new URL(req.originalUrl, APP_URL), {
      pkceCodeVerifier: s.verifier,
      expectedState: s.state,
      expectedNonce: s.nonce,
      idTokenExpected: true,
    });
    // The id_token, verified by the library (signature, issuer, audience, expiry, nonce): who signed in.
    s.claims = s.tokens.claims();
    s.idToken = s.tokens.id_token;
  } catch (err) {
    // access_denied (the user said no), an expired code, a state mismatch…
    return res.status(400).send(page(`<p>Sign-in failed: ${escape(err.error ?? err.message)}. <a href="/">Start again</a></p>`));
  } finally {
    delete s.verifier;
    delete s.state;
    delete s.nonce;
  }
  res.redirect('/');
});

app.post('/logout', async (req, res) => {
  const s = session(req, res);
  // Revoking the refresh token ends this app's session at service-sso (its access tokens die with it), even if the
  // browser never reaches the step below.
  if (s.tokens?.refresh_token) await client.tokenRevocation(config, s.tokens.refresh_token).catch(() => undefined);
  const idTokenHint = s.idToken;
  delete s.tokens;
  delete s.claims;
  delete s.idToken;
  if (!idTokenHint) return res.redirect(303, '/');
  // RP-Initiated Logout 1.0: the browser goes to service-sso's end_session_endpoint, which ends its SSO session (no
  // question asked, since the id_token_hint names the signed-in user) and sends it back to POST_LOGOUT_REDIRECT_URI.
  const endSession = client.buildEndSessionUrl(config, { id_token_hint: idTokenHint, post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI });
  res.redirect(303, endSession.href);
});

app.listen(PORT, () => console.log(`example app on ${APP_URL} (OpenID provider ${metadata.issuer})`));
