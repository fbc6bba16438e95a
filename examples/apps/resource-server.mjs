// An API that accepts service-sso's RFC 9068 access tokens and nothing else: verified locally with jose against the
// issuer's JWKS (fetched once, cached, refetched when an unknown key id appears after a rotation), for THIS API's
// identifier only (`aud`), with `typ: at+jwt` so that an id_token or another kind of JWT never passes.
//
// A single-page app on another origin calls it from the browser: CORS_ORIGINS lists those origins (comma-separated);
// the answers carry CORS for them, never with credentials (the token travels in the Authorization header).
//
//   ISSUER=https://sso.example.com AUDIENCE=https://invoices.example.com/ CORS_ORIGINS=https://app.example.com \
//     node resource-server.mjs
import cors from 'cors';
import express from 'express';
import * as jose from 'jose';

export async function createApi({ issuer, audience, requiredScope = 'invoices:read', insecure = false, corsOrigins = [] }) {
  // OpenID Connect discovery gives jwks_uri; jose's remote key set caches the keys.
  const metadata = await (await fetch(new URL('/.well-known/openid-configuration', issuer))).json();
  if (!insecure && !metadata.jwks_uri.startsWith('https:')) throw new Error('jwks_uri must be https');
  const jwks = jose.createRemoteJWKSet(new URL(metadata.jwks_uri));

  const requireToken = (scope) => async (req, res, next) => {
    const token = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!token) return res.status(401).set('WWW-Authenticate', 'Bearer').json({ error: 'invalid_token' });
    try {
      const { payload } = await jose.jwtVerify(token, jwks, {
        issuer: metadata.issuer,
        audience,
        typ: 'at+jwt',
        algorithms: ['RS256', 'ES256'],
        requiredClaims: ['sub', 'client_id', 'scope', 'jti', 'exp', 'iat'],
      });
      if (!String(payload.scope).split(' ').includes(scope)) {
        return res
          .status(403)
          .set('WWW-Authenticate', `Bearer error="insufficient_scope", scope="${scope}"`)
          .json({ error: 'insufficient_scope' });
      }
      req.token = payload;
      next();
    } catch {
      return res.status(401).set('WWW-Authenticate', 'Bearer error="invalid_token"').json({ error: 'invalid_token' });
    }
  };

  const app = express();
  // The browser app's origins only; the preflight (Authorization is not a simple header) is answered too.
  app.use(
    cors({
      origin: corsOrigins,
      methods: ['GET', 'POST'],
      allowedHeaders: ['Authorization', 'Content-Type'],
      exposedHeaders: ['WWW-Authenticate'],
      maxAge: 600,
    }),
  );
  app.get('/invoices', requireToken(requiredScope), (req, res) => {
    // `sub` is the user, or the calling service's client_id for client_credentials (then sub === client_id).
    res.json({ caller: req.token.sub, client_id: req.token.client_id, machine: req.token.sub === req.token.client_id, invoices: [] });
  });
  return app;
}

// Run as a program (not when imported): no top-level await, so the module also loads through require().
if (import.meta.url === `file://${process.argv[1]}`) {
  (async () => {
    const { ISSUER, AUDIENCE, PORT = '5000', CORS_ORIGINS = '' } = process.env;
    const corsOrigins = CORS_ORIGINS.split(',')
      .map((o) => o.trim())
      .filter(Boolean);
    const app = await createApi({ issuer: ISSUER, audience: AUDIENCE, insecure: ISSUER.startsWith('http:'), corsOrigins });
    app.listen(Number(PORT), () => console.log(`API on http://localhost:${PORT}/invoices`));
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
