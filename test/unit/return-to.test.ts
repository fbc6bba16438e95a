import { resolveReturnTo } from '../../src/services/oauth/return-to';

const config = { baseUrl: 'https://sso.test', baseOrigin: 'https://sso.test', loginApps: { portal: 'https://portal.test' } };

describe('post-login return_to (CONTRACT §8: `//` paths refused exactly like login-target)', () => {
  test.each([
    '//portal.test/welcome',
    '/\\portal.test/welcome',
    '\\\\portal.test',
    ' //portal.test/',
    'https://portal.test//evil.test/x',
    '//evil.test',
  ])('%s is refused', (value) => {
    expect(resolveReturnTo(config, value)).toBeUndefined();
  });

  test.each([
    ['https://portal.test/welcome', 'https://portal.test/welcome'],
    ['/consent?request_id=1', 'https://sso.test/consent?request_id=1'],
  ])('%s is allowed', (value, expected) => {
    expect(resolveReturnTo(config, value)).toBe(expected);
  });
});
