import { resolveRequestedScopes } from '../../src/services/oauth/scopes';

/** OIDC Core §3.1.2.1 and RFC 6749 §4.1.2.1 as one pure rule: requested scope x client scopes -> granted or refused. */
describe('resolveRequestedScopes', () => {
  const client = ['openid', 'profile', 'email', 'offline_access'];
  test.each([
    ['openid profile email', client, { ok: true, scopes: ['openid', 'profile', 'email'] }],
    ['openid profile email offline_access', client, { ok: true, scopes: ['openid', 'profile', 'email', 'offline_access'] }],
    ['openid eduperson_entitlement email', client, { ok: true, scopes: ['openid', 'email'] }],
    ['openid unknown', client, { ok: true, scopes: ['openid'] }],
    ['email  openid', client, { ok: true, scopes: ['openid', 'email'] }],
    ['openid admin', client, { ok: false, error: 'invalid_scope' }],
    ['openid offline_access', ['openid'], { ok: false, error: 'invalid_scope' }],
    ['profile unknown', client, { ok: false, error: 'invalid_scope' }],
    ['profile', client, { ok: true, scopes: ['profile'] }],
    ['', client, { ok: false, error: 'invalid_request' }],
    ['unknown', client, { ok: false, error: 'invalid_scope' }],
  ] as const)('%j with client scopes %j -> %j', (scope, clientScopes, expected) => {
    expect(resolveRequestedScopes(scope, clientScopes)).toMatchObject(expected);
  });
});
