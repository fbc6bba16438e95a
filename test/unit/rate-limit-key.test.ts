import { ipKeyGenerator } from 'express-rate-limit';
import { rateLimitKey } from '../../src/middleware/rate-limit';

/** The fast paths of the limiter key give exactly what express-rate-limit's ipKeyGenerator gives. */
test.each([
  '127.0.0.1',
  '203.0.113.7',
  '::ffff:127.0.0.1',
  '::FFFF:198.51.100.20',
  '::ffff:7f00:1',
  '::1',
  '2001:db8:abcd:12::1',
  '2001:db8:abcd:12ff::2',
])('%s', (ip) => {
  expect(rateLimitKey(ip)).toBe(ipKeyGenerator(ip));
});

test('two addresses of one /56 IPv6 network share a key; IPv4 addresses do not', () => {
  expect(rateLimitKey('2001:db8:abcd:1200::1')).toBe(rateLimitKey('2001:db8:abcd:12ff::2'));
  expect(rateLimitKey('203.0.113.7')).not.toBe(rateLimitKey('203.0.113.8'));
  expect(rateLimitKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
});
