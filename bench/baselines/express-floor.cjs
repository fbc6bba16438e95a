// Baseline: the floor of this server's stateless answers (issue 33). Bare Express 5 doing the work every answer of
// the server must do, and nothing of the server's own making:
// - the SAME body bytes with the SAME headers as the server (recorded by the bench from the server's own answers:
//   the recorded security headers, Cache-Control, Content-Type, ETag, ...), set one `setHeader` each, as Express
//   code does;
// - an X-Request-Id per answer (a sane incoming one kept, else a UUID, as the server does);
// - under /api, the per-IP limit's count and its two draft-7 headers (a fixed window per address, one map lookup);
// - one access-log line per request (not for GET /health) through pino, as the server writes it: the same fields and
//   message, the same asynchronous destination with its batching (4 kB or 200 ms), on stdout.
// GET /api/auth/me is the /me ceiling (express-me.cjs: jsonwebtoken HS256 verify + the one prepared pg statement)
// with the same additions.
// Not in it: the duration histogram, the router, the route adapter, the request context: the server's own steps.
// Usage: node express-floor.cjs PORT ANSWERS_JSON SECRET DATABASE_URL
//   ANSWERS_JSON: { rateLimit: { max, windowMs }, answers: [{ path, status, headers: [[name, value], ...], body (base64),
//   me?: true }] }; an answer marked `me` is computed as the ceiling computes it (its recorded body is not sent).
'use strict';
const { createSecretKey, randomUUID } = require('node:crypto');
const fs = require('node:fs');
const express = require('express');
const { Pool } = require('pg');
const pino = require('pino');
const { answerMe } = require('./me-query.cjs');

const [, , port, answersFile, secret, databaseUrl] = process.argv;
const { rateLimit, answers } = JSON.parse(fs.readFileSync(answersFile, 'utf8'));
const key = createSecretKey(Buffer.from(secret ?? '', 'utf8'));
const pool = new Pool({ connectionString: databaseUrl, max: 10 });

// The server's access log (src/lib/logger.ts, src/middleware/request-log.ts).
const access = pino(
  { level: 'trace', base: undefined },
  pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 200, maxLength: 16 * 1024 * 1024 }),
);

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{8,128}$/;
const requestIdOf = (req) => {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
};

// The per-IP limit's count: a fixed window per address from its first hit (what the server's in-memory limiter does).
const counters = new Map();
const policy = `${rateLimit.max};w=${Math.ceil(rateLimit.windowMs / 1000)}`;
const limit = (req, res) => {
  const now = Date.now();
  let counter = counters.get(req.ip);
  if (counter === undefined || counter.resetAt <= now) {
    counter = { hits: 0, resetAt: now + rateLimit.windowMs };
    counters.set(req.ip, counter);
  }
  counter.hits++;
  res.setHeader('RateLimit-Policy', policy);
  res.setHeader(
    'RateLimit',
    `limit=${rateLimit.max}, remaining=${Math.max(rateLimit.max - counter.hits, 0)}, reset=${Math.max(0, Math.ceil((counter.resetAt - now) / 1000))}`,
  );
};

/** What every answer gets before its handler: the request id, the recorded headers, the limit, the log line. */
const common = (answer) => {
  const headers = answer.headers;
  const limited = answer.path === '/api' || answer.path.startsWith('/api/');
  const logged = answer.path !== '/health';
  return (req, res) => {
    const started = performance.now();
    const id = requestIdOf(req);
    res.setHeader('X-Request-Id', id);
    for (let i = 0; i < headers.length; i++) res.setHeader(headers[i][0], headers[i][1]);
    if (limited) limit(req, res);
    if (logged) {
      res.on('close', () => {
        const url = req.originalUrl;
        const q = url.indexOf('?');
        access.info(
          {
            req: { id, method: req.method, path: q === -1 ? url : url.slice(0, q) },
            res: { statusCode: res.statusCode },
            responseTime: Math.round(performance.now() - started),
          },
          res.writableFinished ? 'request completed' : 'request aborted',
        );
      });
    }
  };
};

const app = express();
app.disable('x-powered-by');
// The server sends no ETag on /me (its documents carry their recorded one).
app.set('etag', false);
app.get('/ready', (_req, res) => {
  res.json({ status: 'OK' });
});
for (const answer of answers) {
  const before = common(answer);
  if (answer.me) {
    app.get(answer.path, (req, res) => {
      before(req, res);
      return answerMe(req, res, { pool, key, name: 'floor_load_user', status: answer.status });
    });
  } else {
    const body = Buffer.from(answer.body, 'base64');
    app.get(answer.path, (req, res) => {
      before(req, res);
      res.statusCode = answer.status;
      res.end(body);
    });
  }
}
const server = app.listen(Number(port ?? 0), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => access.flush(() => process.exit(0)))));
