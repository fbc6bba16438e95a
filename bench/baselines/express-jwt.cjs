// Baseline: Express 5 + jsonwebtoken HS256 verify of a Bearer token (the no-database ceiling of an authenticated
// call). The key is a KeyObject created once, as the SSO server does. Usage: node express-jwt.cjs PORT SECRET
'use strict';
const { createSecretKey } = require('node:crypto');
const express = require('express');
const jwt = require('jsonwebtoken');

const key = createSecretKey(Buffer.from(process.argv[3] ?? '', 'utf8'));
const app = express();
app.get('/ready', (_req, res) => {
  res.json({ status: 'OK' });
});
app.get('/', (req, res) => {
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  try {
    const payload = jwt.verify(match ? match[1] : '', key, { algorithms: ['HS256'] });
    res.json({ user: { id: payload.userId, email: payload.email } });
  } catch {
    res.status(401).json({ error: 'unauthorized' });
  }
});
const server = app.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
