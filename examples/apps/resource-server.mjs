// An API that accepts service-sso's RFC 9068 access tokens and nothing else: verified locally with jose against the
// issuer's JWKS (fetched once, cached, refetched when an unknown key id appears after a rotation), for THIS API's
// identifier only (`aud`), with `typ: at+jwt` so that an id_token or another kind of JWT never passes.
//
// DPoP-bound tokens (RFC 9449, a `cnf.jkt` claim) are accepted only as `Authorization: DPoP <token>` together with a
// `DPoP` proof of the key they are bound to, made for this request (htm, htu) and this token (ath), fresh (iat) and
// used once (jti). A bound token sent as a Bearer token is refused: whoever copied it lacks the key.
//
// A single-page app on another origin calls it from the browser: CORS_ORIGINS lists those origins (comma-separated);
// the answers carry CORS for them, never with credentials (the token travels in the Authorization header).
//
//   ISSUER=https://sso.example.com AUDIENCE=https://invoices.example.com/ PUBLIC_URL=https://invoices.example.com \
//     CORS_ORIGINS=https://app.example.com node resource-server.mjs
import { createHash } from 'node:crypto';
import cors from 'cors';
import express from 'express';
import * as jose from 'jose';

// The proof algorithms the server accepts too (its discovery's dpop_signing_alg_values_supported).
const DPOP_ALGS = ['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519'];
const PROOF_MAX_AGE_S = 60;

/**
 * RFC 9449 §4.3 and §7: the request's DPoP proof, checked for the access token `token` bound to the key `jkt`.
 * `seen` remembers each proof's jti for its lifetime (one process; several instances would share it, e.g. in Redis).
 * Throws with the reason when the proof is not acceptable.
 */
async function checkDpopProof(req, token, jkt, { publicUrl, seen }) {
  const proof = req.headers.dpop;
  if (typeof proof !== 'string' || proof.includes(',')) throw new Error('send exactly one DPoP header');
  // The signature with the key in the proof's own header (a public key; jose refuses a private or symmetric one).
  const { payload, protectedHeader } = await jose.jwtVerify(proof, jose.EmbeddedJWK, {
    typ: 'dpop+jwt',
    algorithms: DPOP_ALGS,
    maxTokenAge: PROOF_MAX_AGE_S, // iat: at most 60 s old (and not in the future)
    clockTolerance: 5,
    requiredClaims: ['htm', 'htu', 'iat', 'jti', 'ath'],
  });
  // cnf.jkt: the proof is made with the key the token is bound to (RFC 7638 thumbprint).
  if ((await jose.calculateJwkThumbprint(protectedHeader.jwk, 'sha256')) !== jkt) throw new Error('the proof is made with another key');
  // htm and htu: the proof is for this request (the URL as the client called it, without query and fragment).
  if (payload.htm !== req.method) throw new Error('htm is not the method of this request');
  const url = new URL(req.originalUrl, publicUrl ?? `${req.protocol}://${req.get('host')}`);
  const withoutQuery = (u) => {
    const parsed = new URL(u);
    return `${parsed.origin}${parsed.pathname}`;
  };
  if (typeof payload.htu !== 'string' || !URL.canParse(payload.htu) || withoutQuery(payload.htu) !== withoutQuery(url)) {
    throw new Error('htu is not the URL of this request');
  }
  // ath: the proof is for this access token.
  if (payload.ath !== createHash('sha256').update(token).digest('base64url')) throw new Error('ath is not the hash of this token');
  // jti: a proof is used once.
  const now = Date.now();
  for (const [id, until] of seen) if (until < now) seen.delete(id);
  const id = `${jkt}.${payload.jti}`;
  if (seen.has(id)) throw new Error('this proof was used before');
  seen.set(id, now + (PROOF_MAX_AGE_S + 10) * 1000);
}

export async function createApi({
  issuer,
  audience,
  requiredScope = 'invoices:read',
  insecure = false,
  corsOrigins = [],
  // The API's public base URL as clients call it (what a DPoP proof's htu names), e.g. behind a proxy; by default
  // the request's own scheme and Host.
  publicUrl,
}) {
  // OpenID Connect discovery gives jwks_uri; jose's remote key set caches the keys.
  const metadata = await (await fetch(new URL('/.well-known/openid-configuration', issuer))).json();
  if (!insecure && !metadata.jwks_uri.startsWith('https:')) throw new Error('jwks_uri must be https');
  const jwks = jose.createRemoteJWKSet(new URL(metadata.jwks_uri));
  const seen = new Map();

  const refuse = (res, status, scheme, error, extra = '') =>
    res
      .status(status)
      .set(
        'WWW-Authenticate',
        scheme === 'DPoP' ? `DPoP error="${error}"${extra}, algs="${DPOP_ALGS.join(' ')}"` : `Bearer error="${error}"${extra}`,
      )
      .json({ error });

  const requireToken = (scope) => async (req, res, next) => {
    const [, scheme, token] = /^(Bearer|DPoP) (\S+)$/i.exec(req.headers.authorization ?? '') ?? [];
    if (!token) {
      return res
        .status(401)
        .set('WWW-Authenticate', `Bearer, DPoP algs="${DPOP_ALGS.join(' ')}"`)
        .json({ error: 'invalid_token' });
    }
    const dpop = scheme.toLowerCase() === 'dpop';
    let payload;
    try {
      ({ payload } = await jose.jwtVerify(token, jwks, {
        issuer: metadata.issuer,
        audience,
        typ: 'at+jwt',
        algorithms: ['RS256', 'ES256'],
        requiredClaims: ['sub', 'client_id', 'scope', 'jti', 'exp', 'iat'],
      }));
    } catch {
      return refuse(res, 401, dpop ? 'DPoP' : 'Bearer', 'invalid_token');
    }
    const jkt = payload.cnf?.jkt;
    if (jkt !== undefined || dpop) {
      // A bound token only with the DPoP scheme, and the DPoP scheme only for a bound token (RFC 9449 §7.1).
      if (typeof jkt !== 'string' || !dpop) return refuse(res, 401, 'DPoP', 'invalid_token');
      try {
        await checkDpopProof(req, token, jkt, { publicUrl, seen });
      } catch (err) {
        return refuse(res, 401, 'DPoP', 'invalid_dpop_proof', `, error_description="${String(err.message).replace(/"/g, "'")}"`);
      }
    }
    if (!String(payload.scope).split(' ').includes(scope)) {
      return refuse(res, 403, dpop ? 'DPoP' : 'Bearer', 'insufficient_scope', `, scope="${scope}"`);
    }
    req.token = payload;
    next();
  };

  const app = express();
  // The browser app's origins only; the preflight (Authorization is not a simple header) is answered too.
  app.use(
    cors({
      origin: corsOrigins,
      methods: ['GET', 'POST'],
      allowedHeaders: ['Authorization', 'Content-Type', 'DPoP'],
      exposedHeaders: ['WWW-Authenticate'],
      maxAge: 600,
    }),
  );
  app.get('/invoices', requireToken(requiredScope), (req, res) => {
    // `sub` is the user, or the calling service's client_id for client_credentials (then sub === client_id).
    res.json({
      caller: req.token.sub,
      client_id: req.token.client_id,
      machine: req.token.sub === req.token.client_id,
      dpop: req.token.cnf?.jkt !== undefined,
      invoices: [],
    });
  });
  return app;
}

// Run as a program (not when imported): no top-level await, so the module also loads through require().
if (import.meta.url === `file://${process.argv[1]}`) {
  (async () => {
    const { ISSUER, AUDIENCE, PORT = '5000', CORS_ORIGINS = '', PUBLIC_URL } = process.env;
    const corsOrigins = CORS_ORIGINS.split(',')
      .map((o) => o.trim())
      .filter(Boolean);
    const app = await createApi({
      issuer: ISSUER,
      audience: AUDIENCE,
      insecure: ISSUER.startsWith('http:'),
      corsOrigins,
      publicUrl: PUBLIC_URL,
    });
    app.listen(Number(PORT), () => console.log(`API on http://localhost:${PORT}/invoices`));
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
