// The load generator of `npm run bench`, in its own process (pinned away from the server by the harness).
// Usage: node bench/load.mjs SPEC.json — prints one JSON line per reporting window ({"window": …}) when the spec asks
// for windows, then the result as the last line ({"result": …}).
//
// Spec: { jobs: Job[], duration: s, warmup: s, windowSeconds?: s }, every job running at the same time, where Job is
//   { name, tool: 'autocannon', url, method?, headers?, body? | bodies?, connections, rate? }  (stateless, fastest), or
//   { name, tool: 'loop', url, method?, headers?, body?, connections }               (stateless, keep-alive http), or
//   { name, tool: 'chain', url, method, headers, bodyTemplate, field, tokens }       (one connection per token: each
//     request presents the token its connection got last, `{token}` in bodyTemplate, the next one read from the
//     response's JSON `field`; every token is used exactly once).
// A `loop` or `chain` job may carry `sign`: { dpop?: { jwk, alg, htu }, assertion?: { jwk, alg, kid, clientId, aud } }
//   (private JWKs): each request then gets a fresh DPoP proof (RFC 9449) in a `DPoP` header, and/or a fresh
//   private_key_jwt client assertion (RFC 7523) appended to its form body, as a client library would make them. The
//   signing runs here, on the load generator's CPU, not on the server's.
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import * as jose from 'jose';
import fs from 'node:fs';
import http from 'node:http';

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const warmupMs = (spec.warmup ?? 0) * 1000;
const durationMs = spec.duration * 1000;
// Bounded whatever happens: a stuck job cannot keep this process alive.
setTimeout(
  () => {
    process.stderr.write('load generator: hard time limit reached\n');
    process.exit(2);
  },
  warmupMs + durationMs + 30_000,
).unref();

function summarize(latencies, count, bad, seconds) {
  const sorted = Float64Array.from(latencies).sort();
  const at = (q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0);
  return { requests: count, rps: count / seconds, p50: at(0.5), p99: at(0.99), max: sorted.length ? sorted[sorted.length - 1] : 0, bad };
}

async function runAutocannon(job) {
  const options = {
    url: job.url,
    method: job.method ?? 'GET',
    headers: job.headers,
    body: job.body,
    connections: job.connections,
    overallRate: job.rate,
  };
  if (job.bodies) {
    // One of several bodies per request, in turn (e.g. several accounts signing in).
    let next = 0;
    options.requests = [{ method: options.method, setupRequest: (req) => ({ ...req, body: job.bodies[next++ % job.bodies.length] }) }];
  }
  // One continuous run, warm-up included, counting only the responses that arrive in the measured period (as the loops
  // do): two runs would abandon the requests in flight at the boundary, which the server still serves (a login storm's
  // abandoned logins each cost a bcrypt hash inside the measured period without being counted).
  const measureFrom = performance.now() + warmupMs;
  const end = measureFrom + durationMs;
  const stats = { latencies: [], count: 0, bad: 0, failures: {} };
  const instance = autocannon({ ...options, duration: (warmupMs + durationMs) / 1000 });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    const now = performance.now();
    if (now < measureFrom || now > end) return;
    stats.count++;
    stats.latencies.push(responseTime);
    if (statusCode < 200 || statusCode >= 300) {
      stats.bad++;
      stats.failures[statusCode] = (stats.failures[statusCode] ?? 0) + 1;
    }
  });
  const r = await instance;
  // Connection errors and timeouts of the whole run (warm-up included) count as failures.
  const broken = r.errors + r.timeouts;
  if (r.errors) stats.failures.errors = r.errors;
  if (r.timeouts) stats.failures.timeouts = r.timeouts;
  return { name: job.name, ...summarize(stats.latencies, stats.count, stats.bad + broken, durationMs / 1000), failures: stats.failures };
}

/** Closed-loop workers over keep-alive connections; `chain` jobs carry each worker's token forward. */
function runLoops(job, windows) {
  const url = new URL(job.url);
  const connections = job.tool === 'chain' ? job.tokens.length : job.connections;
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const started = performance.now();
  const measureFrom = started + warmupMs;
  const end = measureFrom + durationMs;
  const stats = { latencies: [], count: 0, bad: 0, failures: {} };
  // `paths`: each request takes the next path of the list in turn (pages of one kind with different filters).
  let nextPath = 0;
  const pathOf = () => (job.paths ? job.paths[nextPath++ % job.paths.length] : url.pathname + url.search);
  const send = (body, headers = job.headers) =>
    new Promise((resolve) => {
      const t0 = performance.now();
      const req = http.request(
        { agent, host: url.hostname, port: url.port, path: pathOf(), method: job.method ?? 'GET', headers },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0 }),
          );
        },
      );
      req.on('error', (err) => resolve({ status: 0, body: String(err.message), ms: performance.now() - t0 }));
      req.end(body);
    });
  const record = (t, ok) => {
    if (t < measureFrom) return;
    for (const s of [stats, ...(windows ? [windows.current] : [])]) {
      s.count++;
      if (!ok) s.bad++;
    }
  };
  const signer = job.sign ? makeSigner(job.sign) : undefined;
  const worker = async (token, onToken) => {
    while (performance.now() < end) {
      let body = job.tool === 'chain' ? job.bodyTemplate.replace('{token}', token) : job.body;
      let headers = job.headers;
      if (signer) ({ body, headers } = await signer(body, headers));
      const r = await send(body, headers);
      const ok = r.status >= 200 && r.status < 300;
      const now = performance.now();
      if (now >= measureFrom) {
        stats.latencies.push(r.ms);
        windows?.current.latencies.push(r.ms);
      }
      record(now, ok);
      if (!ok && now >= measureFrom) stats.failures[r.status || 'errors'] = (stats.failures[r.status || 'errors'] ?? 0) + 1;
      if (job.tool === 'chain') {
        const next = ok ? JSON.parse(r.body)[job.field] : undefined;
        if (typeof next !== 'string') {
          if (now < measureFrom) stats.bad++; // a chain broken during warm-up still counts as an error
          process.stderr.write(`${job.name}: chain broken (${r.status} ${r.body.slice(0, 200)})\n`);
          return;
        }
        token = next;
        onToken?.(next);
      }
    }
  };
  // A chain's last tokens go back to the caller, so that another run can carry the same chains on (paired rounds).
  const last = job.tool === 'chain' ? [...job.tokens] : undefined;
  const workers =
    job.tool === 'chain'
      ? job.tokens.map((t, i) => worker(t, (next) => (last[i] = next)))
      : Array.from({ length: connections }, () => worker());
  return Promise.all(workers).then(() => {
    agent.destroy();
    return {
      name: job.name,
      ...summarize(stats.latencies, stats.count, stats.bad, durationMs / 1000),
      failures: stats.failures,
      ...(last ? { tokens: last } : {}),
    };
  });
}

/** Per-request DPoP proofs and client assertions (see the header comment), signed with jose. */
function makeSigner(sign) {
  const keys = {};
  const keyOf = async (name, spec) => (keys[name] ??= await jose.importJWK(spec.jwk, spec.alg));
  return async (body, headers) => {
    const now = Math.floor(Date.now() / 1000);
    const out = { body, headers: { ...headers } };
    if (sign.dpop) {
      const { d: _d, ...publicJwk } = sign.dpop.jwk;
      out.headers.dpop = await new jose.SignJWT({ htm: 'POST', htu: sign.dpop.htu, iat: now, jti: randomUUID() })
        .setProtectedHeader({ alg: sign.dpop.alg, typ: 'dpop+jwt', jwk: publicJwk })
        .sign(await keyOf('dpop', sign.dpop));
    }
    if (sign.assertion) {
      const a = sign.assertion;
      const assertion = await new jose.SignJWT({ iss: a.clientId, sub: a.clientId, aud: a.aud, iat: now, exp: now + 60, jti: randomUUID() })
        .setProtectedHeader({ alg: a.alg, kid: a.kid })
        .sign(await keyOf('assertion', a));
      out.body = `${body}&client_assertion_type=${encodeURIComponent('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')}&client_assertion=${assertion}`;
    }
    return out;
  };
}

async function main() {
  let windows;
  let timer;
  if (spec.windowSeconds) {
    const fresh = () => ({ latencies: [], count: 0, bad: 0, started: performance.now() });
    windows = { current: fresh() };
    setTimeout(() => {
      windows.current = fresh();
      let index = 0;
      timer = setInterval(() => {
        const w = windows.current;
        windows.current = fresh();
        index++;
        const line = {
          window: {
            index,
            at: index * spec.windowSeconds,
            ...summarize(w.latencies, w.count, w.bad, (performance.now() - w.started) / 1000),
          },
        };
        process.stdout.write(`${JSON.stringify(line)}\n`);
      }, spec.windowSeconds * 1000);
    }, warmupMs);
  }
  // Marks of the measured period, for the caller's CPU-time reading of the process under test.
  setTimeout(() => process.stdout.write(`${JSON.stringify({ mark: 'measuring' })}\n`), warmupMs);
  setTimeout(() => process.stdout.write(`${JSON.stringify({ mark: 'measured' })}\n`), warmupMs + durationMs);
  const results = await Promise.all(spec.jobs.map((job) => (job.tool === 'autocannon' ? runAutocannon(job) : runLoops(job, windows))));
  clearInterval(timer);
  process.stdout.write(`${JSON.stringify({ result: results })}\n`);
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`load generator failed: ${err?.stack ?? err}\n`);
  process.exit(1);
});
