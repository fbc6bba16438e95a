// Baseline: the fair ceiling of GET /api/auth/me (issue 22). Express 5 + jsonwebtoken HS256 verify of the Bearer token +
// ONE prepared `pg` statement that loads the session's live user with their active roles and permissions, on the same
// PostgreSQL database as the server (its schema and fixtures), with a pool of the server's default size (10).
// No limiter, no logging, no security headers: what any authenticated lookup must do at least.
// Usage: node express-me.cjs PORT SECRET DATABASE_URL
'use strict';
const { createSecretKey } = require('node:crypto');
const express = require('express');
const { Pool } = require('pg');
const { answerMe } = require('./me-query.cjs');

const key = createSecretKey(Buffer.from(process.argv[3] ?? '', 'utf8'));
const pool = new Pool({ connectionString: process.argv[4], max: 10 });

const app = express();
app.get('/ready', (_req, res) => {
  res.json({ status: 'OK' });
});
app.get('/', (req, res) => answerMe(req, res, { pool, key, name: 'ceiling_load_user' }));
const server = app.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
