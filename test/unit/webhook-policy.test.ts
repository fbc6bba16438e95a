import {
  eventMatches,
  isDelivered,
  isListeningAddress,
  isLoopbackHost,
  isValidEventPattern,
  pointsAtThisServer,
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
  [PROD, 'https://127.0.0.1/x', 'refused_address'],
  [PROD, 'https://10.0.0.1/x', 'refused_address'],
  [PROD, 'https://172.16.0.1/x', 'refused_address'],
  [PROD, 'https://169.254.169.254/x', 'refused_address'],
  [PROD, 'https://[fe80::1]/x', 'refused_address'],
  [PROD, 'https://[fc00::1]/x', 'refused_address'],
  [PROD, 'https://100.64.0.1/x', 'refused_address'],
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

describe('CONTRACT §23: webhooks never target this server', () => {
  const own = { baseUrl: 'https://sso.example.com', oidcIssuer: 'https://login.example.com' };
  test.each([
    ['https://sso.example.com/api/oauth/token', true],
    ['https://SSO.example.com./hook', true],
    ['https://sso.example.com:8443/hook', true],
    ['http://sso.example.com/hook', true],
    ['https://login.example.com/hook', true],
    ['https://hooks.example.com/hook', false],
    ['https://sso.example.com.evil.test/hook', false],
    ['not a url', false],
  ])('%s names this server (public origins, any port): %s', (url, expected) => {
    expect(pointsAtThisServer(own, url)).toBe(expected);
  });

  const local = { baseUrl: 'http://localhost:3000', oidcIssuer: 'http://localhost:3000' };
  test.each([
    ['http://localhost:3000/api/oauth/token', true],
    ['http://127.0.0.1:3000/hook', true],
    ['http://[::1]:3000/hook', true],
    ['http://127.0.0.2:3000/hook', true],
    ['http://localhost:4000/hook', false],
    ['http://127.0.0.1:9/hook', false],
  ])('%s names a loopback BASE_URL (same port only): %s', (url, expected) => {
    expect(pointsAtThisServer(local, url)).toBe(expected);
  });

  const interfaces = new Set(['192.168.1.20', 'fd00::20']);
  test.each([
    ['127.0.0.1', 3000, true],
    ['::1', 3000, true],
    ['::ffff:127.0.0.1', 3000, true],
    ['0.0.0.0', 3000, true],
    ['192.168.1.20', 3000, true],
    ['fd00::20', 3000, true],
    ['192.168.1.21', 3000, false],
    ['127.0.0.1', 3001, false],
    ['93.184.215.14', 3000, false],
  ])('%s port %s is a listening address of a server on port 3000: %s', (address, port, expected) => {
    expect(isListeningAddress(3000, address, port, interfaces)).toBe(expected);
  });

  test('the policy refuses the listening addresses even with WEBHOOK_ALLOW_PRIVATE=true', () => {
    const policy = webhookOutboundPolicy({ isProduction: true, webhookAllowPrivate: true, port: 3000 }, 'https://10.0.0.5/x');
    expect(policy.allowPrivate).toBe(true);
    expect(policy.refuseAddress!('127.0.0.1', 3000)).toBe(true);
    expect(policy.refuseAddress!('10.0.0.5', 443)).toBe(false);
    expect(() => checkOutboundUrl('https://127.0.0.1:3000/x', policy)).toThrow(OutboundRefused);
  });
});
