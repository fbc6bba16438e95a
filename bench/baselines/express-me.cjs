// Baseline: the fair ceiling of GET /api/auth/me (issue 22). Express 5 + jsonwebtoken HS256 verify of the Bearer token +
// ONE prepared `pg` statement that loads the session's live user with their active roles and permissions, on the same
// PostgreSQL database as the server (its schema and fixtures), with a pool of the server's default size (10).
// No limiter, no logging, no security headers: what any authenticated lookup must do at least.
// Usage: node express-me.cjs PORT SECRET DATABASE_URL
'use strict';
const { createSecretKey } = require('node:crypto');
const express = require('express');
const jwt = require('jsonwebtoken');
const { Pool } = require('pg');

const key = createSecretKey(Buffer.from(process.argv[3] ?? '', 'utf8'));
const pool = new Pool({ connectionString: process.argv[4], max: 10 });
const LOAD_USER = `select u.id, u.email, u.first_name, u.last_name, u.email_verified,
       coalesce((select json_agg(json_build_object('id', ro.id, 'name', ro.name, 'application', ro.application) order by ro.name)
                   from user_roles ur join roles ro on ro.id = ur.role_id
                  where ur.user_id = u.id and ro.is_active), '[]'::json) as roles,
       coalesce((select json_agg(distinct rp.permission)
                   from user_roles ur join roles ro on ro.id = ur.role_id join role_permissions rp on rp.role_id = ro.id
                  where ur.user_id = u.id and ro.is_active and ro.application is null), '[]'::json) as permissions
  from sessions s join users u on u.id = s.user_id
 where s.id = $1 and s.user_id = $2 and s.revoked_at is null and s.expires_at > now() and u.is_active`;

const app = express();
app.get('/ready', (_req, res) => {
  res.json({ status: 'OK' });
});
app.get('/', async (req, res) => {
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  let payload;
  try {
    payload = jwt.verify(match ? match[1] : '', key, { algorithms: ['HS256'] });
  } catch {
    return res.status(401).json({ error: 'unauthorized' });
  }
  try {
    const { rows } = await pool.query({ name: 'ceiling_load_user', text: LOAD_USER, values: [payload.sid, payload.userId] });
    const u = rows[0];
    if (!u) return res.status(401).json({ error: 'unauthorized' });
    res.json({
      user: {
        id: u.id,
        email: u.email,
        first_name: u.first_name,
        last_name: u.last_name,
        email_verified: u.email_verified,
        roles: u.roles.map((r) => r.name),
        permissions: u.permissions,
      },
    });
  } catch {
    res.status(503).json({ error: 'service_unavailable' });
  }
});
const server = app.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
