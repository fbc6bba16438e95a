import {
  checkClientShape,
  clientAuthentication,
  DEVICE_CODE_GRANT,
  grantAllowed,
  TOKEN_EXCHANGE_GRANT,
} from '../../src/declarations/client-policy';
import { checkRedirectUri, isPrivateUseRedirectUri, redirectUriMatches } from '../../src/lib/redirect-uri';
import { normalizeUserCode } from '../../src/services/oauth/device.service';

/** CONTRACT §12's client rules as tables: type x grants x redirect URIs -> verdict. */
describe('checkClientShape', () => {
  const web = ['https://app.test/cb'];
  test.each([
    ['confidential', ['authorization_code', 'refresh_token'], web, true],
    ['public', ['authorization_code', 'refresh_token'], web, true],
    ['confidential', ['client_credentials'], [], true],
    ['public', ['client_credentials'], [], false],
    ['public', [DEVICE_CODE_GRANT, 'refresh_token'], [], true],
    ['confidential', [TOKEN_EXCHANGE_GRANT], [], true],
    ['confidential', [TOKEN_EXCHANGE_GRANT, 'client_credentials'], [], true],
    ['public', ['authorization_code', TOKEN_EXCHANGE_GRANT], web, false],
    ['confidential', ['authorization_code'], [], false],
    ['confidential', ['refresh_token'], web, false],
    ['confidential', [], web, false],
    ['confidential', ['password'], web, false],
    ['public', ['authorization_code'], ['com.example.app:/cb'], true],
    ['confidential', ['authorization_code'], ['com.example.app:/cb'], false],
  ] as const)('%s %j %j -> %s', (type, grantTypes, redirectUris, allowed) => {
    expect(checkClientShape({ type, grantTypes, redirectUris }).allowed).toBe(allowed);
  });
});

describe('clientAuthentication', () => {
  test.each([
    ['confidential', true, 'token', 'check_secret'],
    ['confidential', false, 'token', 'refuse'],
    ['confidential', true, 'introspect', 'check_secret'],
    ['public', false, 'token', 'id_only'],
    ['public', false, 'revoke', 'id_only'],
    ['public', false, 'device', 'id_only'],
    ['public', true, 'token', 'refuse'],
    ['public', false, 'introspect', 'refuse'],
  ] as const)('%s, secret %s, at %s -> %s', (type, secret, endpoint, verdict) => {
    expect(clientAuthentication(type, { secret }, endpoint).verdict).toBe(verdict);
  });
});

test('grantAllowed', () => {
  expect(grantAllowed({ grantTypes: ['authorization_code'] }, 'client_credentials')).toBe(false);
  expect(grantAllowed({ grantTypes: ['client_credentials'] }, 'client_credentials')).toBe(true);
});

describe('RFC 8252 redirect URIs', () => {
  test.each([
    [['http://127.0.0.1/cb'], 'http://127.0.0.1:49152/cb', true],
    [['http://127.0.0.1:8000/cb'], 'http://127.0.0.1:49152/cb', true],
    [['http://[::1]/cb'], 'http://[::1]:6000/cb', true],
    [['http://localhost/cb'], 'http://localhost:6000/cb', true],
    [['http://localhost/cb'], 'http://127.0.0.1:6000/cb', false],
    [['http://127.0.0.1/cb'], 'http://127.0.0.1:49152/cb/', false],
    [['http://127.0.0.1/cb'], 'http://127.0.0.1:49152/other', false],
    [['http://127.0.0.1/cb?a=1'], 'http://127.0.0.1:49152/cb?a=2', false],
    [['http://127.0.0.1/cb'], 'https://127.0.0.1:49152/cb', false],
    [['http://127.0.0.1/cb'], 'http://u@127.0.0.1:49152/cb', false],
    [['http://127.0.0.1/cb'], 'http://127.0.0.1:49152/./cb', false],
    [['https://app.test/cb'], 'https://app.test:444/cb', false],
    [['https://app.test/cb'], 'https://app.test/cb', true],
  ])('%j vs %s -> %s', (registered, requested, ok) => {
    expect(redirectUriMatches(registered, requested)).toBe(ok);
  });

  test.each([
    ['com.example.app:/callback', true],
    ['com.example.app:/', true],
    ['com.example.app://callback', false],
    ['myapp:/callback', false],
    ['com.example.app:callback', false],
    ['com.example.app:/cb#x', false],
    ['com.example.app:/c b', false],
  ])('private-use %s -> %s', (uri, ok) => {
    expect(isPrivateUseRedirectUri(uri)).toBe(ok);
    if (ok) expect(checkRedirectUri(uri, { allowPrivateUse: true }).ok).toBe(true);
    expect(checkRedirectUri(uri).ok).toBe(false);
  });
});

test.each([
  ['BCDF-GHJK', 'BCDFGHJK'],
  ['bcdfghjk', 'BCDFGHJK'],
  [' bcdf ghjk ', 'BCDFGHJK'],
  ['BCDF-GHJA', undefined],
  ['BCDF-GHJ', undefined],
])('user code %j -> %s', (typed, normalized) => {
  expect(normalizeUserCode(typed)).toBe(normalized);
});
