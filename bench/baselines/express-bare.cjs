// Baseline: bare Express 5 answering a small JSON body (the framework's own ceiling on this machine).
// Usage: node express-bare.cjs PORT
'use strict';
const express = require('express');

const app = express();
app.get('/', (_req, res) => {
  res.json({ status: 'OK' });
});
const server = app.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
