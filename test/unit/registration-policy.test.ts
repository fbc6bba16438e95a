import {
  checkRegistration,
  clientTypeFor,
  OPEN_REGISTRATION_SCOPES,
  type RequestedRegistration,
} from '../../src/services/oauth/registration/registration-policy';

/** CONTRACT §13: what each registration mode lets a client register, as tables (no database). */
const base: RequestedRegistration = {
  type: 'public',
  grantTypes: ['authorization_code', 'refresh_token'],
  redirectUris: ['http://127.0.0.1/cb'],
  scopes: ['openid', 'profile'],
};
const options = { resourceScopes: ['mcp:tools'], allowHttp: false };

describe('clientTypeFor', () => {
  test.each([
    ['open', undefined, 'public'],
    ['token', undefined, 'confidential'],
    ['open', 'none', 'public'],
    ['token', 'none', 'public'],
    ['open', 'client_secret_basic', 'confidential'],
    ['token', 'client_secret_post', 'confidential'],
  ] as const)('%s mode, token_endpoint_auth_method %s -> %s', (mode, method, type) => {
    expect(clientTypeFor(mode, method)).toBe(type);
  });
});

describe('checkRegistration', () => {
  test.each<[string, 'token' | 'open', Partial<RequestedRegistration>, string | null]>([
    ['a loopback public client', 'open', {}, null],
    ['an https public client', 'open', { redirectUris: ['https://app.example.com/cb'] }, null],
    ['the scopes of an open API', 'open', { scopes: ['openid', 'mcp:tools'] }, null],
    ['every open scope', 'open', { scopes: [...OPEN_REGISTRATION_SCOPES] }, null],
    ['a confidential client', 'open', { type: 'confidential' }, 'invalid_client_metadata'],
    ['plain http off loopback', 'open', { redirectUris: ['http://app.example.com/cb'] }, 'invalid_redirect_uri'],
    ['a private-use scheme', 'open', { redirectUris: ['com.example.app:/cb'] }, 'invalid_redirect_uri'],
    ['the read scope', 'open', { scopes: ['read'] }, 'invalid_client_metadata'],
    ['an unknown scope', 'open', { scopes: ['openid', 'payroll:read'] }, 'invalid_client_metadata'],
    ['the device grant', 'open', { grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'] }, 'invalid_client_metadata'],
    ['no redirect URI', 'open', { redirectUris: [] }, 'invalid_redirect_uri'],
    ['a confidential client', 'token', { type: 'confidential' }, null],
    ['a private-use scheme (public)', 'token', { redirectUris: ['com.example.app:/cb'] }, null],
    [
      'a private-use scheme (confidential)',
      'token',
      { type: 'confidential', redirectUris: ['com.example.app:/cb'] },
      'invalid_redirect_uri',
    ],
    ['the read and admin scopes', 'token', { scopes: ['read', 'admin'] }, null],
    ['an unknown scope', 'token', { scopes: ['payroll:read'] }, 'invalid_client_metadata'],
    ['client_credentials (confidential)', 'token', { type: 'confidential', grantTypes: ['client_credentials'], redirectUris: [] }, null],
    ['client_credentials (public)', 'token', { grantTypes: ['client_credentials'] }, 'invalid_client_metadata'],
    ['plain http off loopback', 'token', { redirectUris: ['http://app.example.com/cb'] }, 'invalid_redirect_uri'],
    // docs/token-exchange.md: only an administrator grants token exchange.
    [
      'token exchange (confidential)',
      'token',
      { type: 'confidential', grantTypes: ['urn:ietf:params:oauth:grant-type:token-exchange'], redirectUris: [] },
      'invalid_client_metadata',
    ],
    [
      'token exchange (open)',
      'open',
      { grantTypes: ['authorization_code', 'urn:ietf:params:oauth:grant-type:token-exchange'] },
      'invalid_client_metadata',
    ],
  ])('%s in %s mode -> %s', (_what, mode, change, error) => {
    const verdict = checkRegistration(mode, { ...base, ...change }, options);
    expect(verdict.allowed ? null : verdict.error).toBe(error);
  });

  test('ALLOW_HTTP_REDIRECT_URIS reaches token registrations, never open ones', () => {
    const http = { ...base, redirectUris: ['http://intranet.example/cb'] };
    expect(checkRegistration('token', http, { ...options, allowHttp: true }).allowed).toBe(true);
    expect(checkRegistration('open', http, { ...options, allowHttp: true }).allowed).toBe(false);
  });

  test('the own scopes are those of the catalogue, in catalogue order; API scopes come with the API', () => {
    const verdict = checkRegistration('open', { ...base, scopes: ['mcp:tools', 'email', 'openid'] }, options);
    expect(verdict).toEqual({ allowed: true, ownScopes: ['openid', 'email'] });
  });
});
