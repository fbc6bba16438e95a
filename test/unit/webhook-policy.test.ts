import {
  eventMatches,
  isDelivered,
  isLoopbackHost,
  isValidEventPattern,
  retryDelaySeconds,
  RETRY_DELAYS_SECONDS,
  webhookOutboundPolicy,
} from '../../src/services/webhooks/webhook-policy';
import { checkOutboundUrl, OutboundRefused } from '../../src/lib/outbound-http';

/** CONTRACT §17's rules as tables (services/webhooks/webhook-policy.ts). No database, no network. */

test('the production retry schedule is the contract: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then failed', () => {
  expect(RETRY_DELAYS_SECONDS).toEqual([5, 300, 1800, 7200, 18000, 36000]);
  expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelaySeconds(n))).toEqual([5, 300, 1800, 7200, 18000, 36000, null]);
  expect(retryDelaySeconds(8)).toBeNull();
  expect(retryDelaySeconds(1, [1, 2])).toBe(1);
  expect(retryDelaySeconds(3, [1, 2])).toBeNull();
});

test.each([
  [200, true],
  [204, true],
  [299, true],
  [300, false],
  [301, false],
  [400, false],
  [410, false],
  [500, false],
  [null, false],
] as const)('status %s delivered: %s', (status, expected) => {
  expect(isDelivered(status)).toBe(expected);
});

test.each([
  ['*', true],
  ['user.created', true],
  ['user.*', true],
  ['auth.login.*', true],
  ['webhook.*', true],
  ['user.creatd', false],
  ['usr.*', false],
  ['.*', false],
  ['user*', false],
  ['oauth.token.issued', false],
  ['', false],
] as const)('event pattern %j valid: %s', (pattern, expected) => {
  expect(isValidEventPattern(pattern)).toBe(expected);
});

test.each([
  [['*'], 'auth.login.failed', true],
  [['user.created'], 'user.created', true],
  [['user.created'], 'user.changed', false],
  [['user.*'], 'user.deactivated', true],
  [['user.*'], 'users.x', false],
  [['auth.login.*'], 'auth.login.failed', true],
  [['auth.login.*'], 'auth.logout', false],
  [['role.*', 'mfa.factor.added'], 'mfa.factor.added', true],
] as const)('patterns %j match %s: %s', (patterns, type, expected) => {
  expect(eventMatches(patterns, type)).toBe(expected);
});

test.each([
  ['localhost', true],
  ['app.localhost', true],
  ['127.0.0.1', true],
  ['127.9.9.9', true],
  ['[::1]', true],
  ['::ffff:127.0.0.1', true],
  ['10.0.0.1', false],
  ['example.com', false],
  ['169.254.169.254', false],
] as const)('loopback host %s: %s', (host, expected) => {
  expect(isLoopbackHost(host)).toBe(expected);
});

const DEV = { isProduction: false, webhookAllowPrivate: false };
const PROD = { isProduction: true, webhookAllowPrivate: false };
const PROD_PRIVATE = { isProduction: true, webhookAllowPrivate: true };
type Env = typeof DEV;

/** The synchronous part of the policy (scheme, credentials, IP literals); names are resolved at save and send time. */
function verdict(config: Env, url: string): string {
  try {
    checkOutboundUrl(url, webhookOutboundPolicy(config, url));
    return 'allowed';
  } catch (err) {
    return (err as OutboundRefused).reason;
  }
}

test.each([
  [DEV, 'https://hooks.example.com/x', 'allowed'],
  [DEV, 'http://127.0.0.1:8080/x', 'allowed'],
  [DEV, 'http://localhost:8080/x', 'allowed'],
  [DEV, 'http://example.com/x', 'scheme'],
  [DEV, 'https://10.0.0.1/x', 'allowed'],
  [PROD, 'https://hooks.example.com/x', 'allowed'],
  [PROD, 'http://127.0.0.1:8080/x', 'scheme'],
  [PROD, 'http://hooks.example.com/x', 'scheme'],
  [PROD, 'https://127.0.0.1/x', 'private_address'],
  [PROD, 'https://10.0.0.1/x', 'private_address'],
  [PROD, 'https://172.16.0.1/x', 'private_address'],
  [PROD, 'https://169.254.169.254/x', 'private_address'],
  [PROD, 'https://[fe80::1]/x', 'private_address'],
  [PROD, 'https://[fc00::1]/x', 'private_address'],
  [PROD, 'https://100.64.0.1/x', 'private_address'],
  [PROD, 'https://user:pw@hooks.example.com/x', 'bad_url'],
  [PROD, 'ftp://hooks.example.com/x', 'scheme'],
  [PROD_PRIVATE, 'https://10.0.0.1/x', 'allowed'],
  [PROD_PRIVATE, 'http://10.0.0.1/x', 'scheme'],
  [PROD_PRIVATE, 'http://127.0.0.1/x', 'scheme'],
] as const)('%o %s -> %s', (config, url, expected) => {
  expect(verdict(config, url)).toBe(expected);
});

test('the delivery policy: 10 s timeout, a small body cap, no private targets in production', () => {
  const policy = webhookOutboundPolicy(PROD, 'https://hooks.example.com/x');
  expect(policy).toMatchObject({ allowPrivate: false, allowHttp: false, timeoutMs: 10_000, maxBytes: 65_536 });
});
