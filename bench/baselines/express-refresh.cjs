// Baseline: the ceiling of the OAuth refresh grant when the refresh token is spent in PostgreSQL (issue 33). Express 5
// doing what any refresh of this server's tokens must do at least, with the libraries the server uses:
// - the form body (express.urlencoded) and client_secret_basic, the secret compared by SHA-256 in constant time;
// - the refresh token (HS256, jsonwebtoken) verified;
// - ONE prepared `pg` statement: the server's own rotation statement (the token spent once for every instance, its
//   successor stored, the session slid, the user, roles and permissions read), read from the build, on the same
//   database, with a pool of the server's default size (10);
// - the new access and refresh tokens (HS256, jsonwebtoken, the server's claims) and an RS256 id_token (jose, a 2048-bit
//   key, the server's claims with at_hash);
// - the answer with `Cache-Control: no-store`.
// No limiter, no logging, no security headers, no audit or metrics, no grace window or reuse detection path.
// Usage: node express-refresh.cjs PORT REFRESH_SECRET ACCESS_SECRET DATABASE_URL CLIENT_ID CLIENT_SECRET ISSUER
'use strict';
const { createHash, createSecretKey, generateKeyPairSync, randomUUID, timingSafeEqual } = require('node:crypto');
const path = require('node:path');
const express = require('express');
const jwt = require('jsonwebtoken');
const { SignJWT } = require('jose');
const { Pool } = require('pg');
const { ROTATE_SQL } = require(path.join(__dirname, '../../dist/src/db/repositories/refresh-tokens.repo.js'));
const { lastUseStaleBefore } = require(path.join(__dirname, '../../dist/src/db/last-use.js'));
if (typeof ROTATE_SQL !== 'string' || typeof lastUseStaleBefore !== 'function') {
  throw new Error('express-refresh: the build in dist/ has no ROTATE_SQL or lastUseStaleBefore; run npm run build');
}

const [port, refreshSecret, accessSecret, databaseUrl, clientId, clientSecret, issuer] = process.argv.slice(2);
const refreshKey = createSecretKey(Buffer.from(refreshSecret, 'utf8'));
const accessKey = createSecretKey(Buffer.from(accessSecret, 'utf8'));
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const secretHash = createHash('sha256').update(clientSecret).digest();
const pool = new Pool({ connectionString: databaseUrl, max: 10 });
// The server's defaults: access token 24 h (OAuth answers expires_in 1 h), refresh 30 days, sessions 90 days.
const ACCESS_TTL = 24 * 3600;
const EXPIRES_IN = 3600;
const REFRESH_TTL = 30 * 24 * 3600;
const SESSION_MAX_AGE = 90 * 24 * 3600;
const ID_TOKEN_TTL = 3600;
const AUD = 'service';

function clientOk(header) {
  const m = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!m) return false;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0 || decodeURIComponent(decoded.slice(0, colon)) !== clientId) return false;
  return timingSafeEqual(
    createHash('sha256')
      .update(decodeURIComponent(decoded.slice(colon + 1)))
      .digest(),
    secretHash,
  );
}

const app = express();
app.get('/ready', (_req, res) => res.json({ status: 'OK' }));
app.post('/token', express.urlencoded({ extended: false }), async (req, res) => {
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  if (!clientOk(req.headers.authorization)) return res.status(401).json({ error: 'invalid_client' });
  if (req.body?.grant_type !== 'refresh_token') return res.status(400).json({ error: 'unsupported_grant_type' });
  let p;
  try {
    p = jwt.verify(String(req.body.refresh_token ?? ''), refreshKey, { algorithms: ['HS256'], issuer, audience: AUD });
  } catch {
    return res.status(400).json({ error: 'invalid_grant' });
  }
  if (p.client_id !== clientId) return res.status(400).json({ error: 'invalid_grant' });
  const now = new Date();
  const successorId = randomUUID();
  let row;
  try {
    const params = [p.sid, p.userId, p.tokenId, now, successorId, REFRESH_TTL, SESSION_MAX_AGE, null, lastUseStaleBefore(now)];
    ({
      rows: [row],
    } = await pool.query({ name: 'ceiling_rotate', text: ROTATE_SQL, values: params }));
  } catch {
    return res.status(503).json({ error: 'temporarily_unavailable' });
  }
  if (!row?.id) return res.status(400).json({ error: 'invalid_grant' });
  const iat = Math.floor(now.getTime() / 1000);
  const name = `${row.first_name} ${row.last_name}`.trim();
  const claims = {
    userId: row.id,
    email: row.email,
    name,
    // The server's tokens carry the global roles (no application's).
    roles: row.roles.filter((r) => r.application === null).map((r) => r.name),
    sid: p.sid,
    amr: row.amr,
    client_id: clientId,
    scope: p.scope,
  };
  const options = { algorithm: 'HS256', issuer, audience: AUD };
  const accessToken = jwt.sign({ ...claims, jti: randomUUID(), iat, exp: iat + ACCESS_TTL }, accessKey, options);
  const refreshExp = Math.min(iat + REFRESH_TTL, Math.floor(new Date(row.refresh_expires_at).getTime() / 1000));
  const refreshToken = jwt.sign({ ...claims, tokenId: successorId, jti: successorId, iat, exp: refreshExp }, refreshKey, options);
  const atHash = createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url');
  // The claims of the bench's grant, `openid profile email` (the server adds profile and email claims by scope).
  const idToken = await new SignJWT({
    auth_time: Math.floor(new Date(row.auth_time).getTime() / 1000),
    sid: row.oidc_sid,
    at_hash: atHash,
    amr: row.amr,
    name,
    given_name: row.first_name,
    family_name: row.last_name,
    updated_at: Math.floor(new Date(row.user_updated_at).getTime() / 1000),
    email: row.email,
    email_verified: row.email_verified,
  })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: 'ceiling' })
    .setIssuer(issuer)
    .setSubject(row.id)
    .setAudience(clientId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ID_TOKEN_TTL)
    .sign(privateKey);
  res.json({
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: EXPIRES_IN,
    refresh_token: refreshToken,
    scope: p.scope,
    id_token: idToken,
  });
});
const server = app.listen(Number(port ?? 0), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
