import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * deploy/grafana-dashboard.json, deploy/prometheus-alerts.yml and docs/operations.md name metrics: every one of them
 * must be a series the server really exposes (a renamed metric would silently empty a panel or mute an alert).
 */
const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const METRICS_TOKEN = 'deploy-files-metrics-token';
let t: TestApp;
let exposed: Set<string>;

beforeAll(async () => {
  t = await createTestApp({ env: { METRICS_TOKEN } });
  // One request of each kind so that every labelled series exists.
  await request(t.app).get('/health');
  await request(t.app).post('/api/auth/login').send({ email: 'nobody@example.test', password: 'wrong-password' });
  const text = (await request(t.app).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`)).text;
  exposed = new Set(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(l)![0]),
  );
});
afterAll(async () => {
  await t.close();
});

/** Metric names used in PromQL expressions (functions, labels and keywords left out). */
function metricNames(expressions: string[]): string[] {
  const names = new Set<string>();
  for (const expr of expressions) {
    const withoutLabels = expr.replace(/\{[^}]*\}/g, '{}').replace(/"[^"]*"/g, '""');
    for (const [name] of withoutLabels.matchAll(/\b(?:sso|http|nodejs|process)_[a-z0-9_]+\b/g)) names.add(name);
  }
  return [...names].sort();
}

test('every metric the Grafana dashboard queries is exposed', () => {
  const dashboard = JSON.parse(read('deploy/grafana-dashboard.json')) as {
    panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
  };
  expect(dashboard.panels.length).toBeGreaterThan(10);
  const names = metricNames(dashboard.panels.flatMap((p) => p.targets.map((target) => target.expr)));
  expect(names).toEqual(
    expect.arrayContaining(['sso_sign_ins_total', 'sso_tokens_issued_total', 'sso_db_pool_waiting', 'nodejs_eventloop_lag_p99_seconds']),
  );
  expect(names.filter((n) => !exposed.has(n))).toEqual([]);
});

test('every metric the alert rules use is exposed, and every rule has a summary', () => {
  const rules = read('deploy/prometheus-alerts.yml');
  const exprs = [...rules.matchAll(/expr: (\|\n(?:\s{10,}.*\n)+|.*)/g)].map((m) => m[1]!);
  expect(exprs.length).toBe([...rules.matchAll(/- alert: /g)].length);
  expect([...rules.matchAll(/summary: /g)].length).toBe(exprs.length);
  const names = metricNames(exprs);
  expect(names.length).toBeGreaterThan(8);
  expect(names.filter((n) => !exposed.has(n))).toEqual([]);
});

test('docs/operations.md documents exactly the sso_* metrics the server exposes', () => {
  const documented = new Set([...read('docs/operations.md').matchAll(/`(sso_[a-z_]+)`/g)].map((m) => m[1]!));
  const ours = [...exposed].filter((n) => n.startsWith('sso_'));
  expect(ours.filter((n) => !documented.has(n))).toEqual([]);
  expect([...documented].filter((n) => !exposed.has(n))).toEqual([]);
});

test('docker-compose runs two instances on one PostgreSQL and Redis behind deploy/nginx.conf', () => {
  const compose = read('deploy/docker-compose.yml');
  const nginx = read('deploy/nginx.conf');
  for (const service of ['postgres', 'redis', 'migrate', 'sso1', 'sso2', 'nginx'])
    expect(compose).toMatch(new RegExp(`^  ${service}:$`, 'm'));
  expect(compose).toContain('./nginx.conf:/etc/nginx/conf.d/default.conf:ro');
  expect(compose).toContain('TRUST_PROXY: "1"');
  expect(compose).toContain('REDIS_URL: redis://redis:6379');
  expect(nginx).toContain('server sso1:3000');
  expect(nginx).toContain('server sso2:3000');
  // nginx's upstream connections idle for less than the instances' 5 s keep-alive timeout: a graceful stop fails no
  // request sent through it (docs/operations.md, "Draining").
  const upstream = nginx.split('upstream sso {')[1]!.split('}')[0]!;
  expect(upstream).toMatch(/^\s*keepalive_timeout 4s;$/m);
});

test('docs/operations.md covers every variable the server reads', () => {
  const variables = [...read('src/config/index.ts').matchAll(/^ {2}([A-Z][A-Z0-9_]+): /gm)].map((m) => m[1]!);
  expect(variables.length).toBeGreaterThan(25);
  const docs = read('docs/operations.md');
  expect(variables.filter((v) => !docs.includes(`\`${v}\``))).toEqual([]);
});
