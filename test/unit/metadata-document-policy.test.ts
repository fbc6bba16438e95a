import {
  cacheLifetimeSeconds,
  checkMetadataDocument,
  checkMetadataDocumentUrl,
  isMetadataDocumentClientId,
} from '../../src/services/oauth/registration/metadata-document-policy';

const URL_ID = 'https://app.example.com/oauth/client.json';
const base = { client_id: URL_ID, redirect_uris: ['https://app.example.com/cb'] };

describe('which client_ids are metadata documents', () => {
  test.each([
    [URL_ID, true],
    ['HTTPS://app.example.com/c.json', true],
    ['http://app.example.com/c.json', false],
    ['a1b2c3d4e5', false],
  ])('%s -> %s', (id, expected) => expect(isMetadataDocumentClientId(id)).toBe(expected));
});

describe('the client_id URL', () => {
  test.each([
    [URL_ID, undefined],
    ['https://app.example.com:8443/c.json?v=1', undefined],
    ['https://app.example.com', 'client_id URL must have a path'],
    ['https://app.example.com/', 'client_id URL must have a path'],
    ['https://app.example.com/a/./c.json', 'client_id URL must not contain dot segments'],
    ['https://app.example.com/a/%2e%2e/c.json', 'client_id URL must not contain dot segments'],
    ['https://app.example.com/c.json#frag', 'client_id URL must not contain a fragment'],
    ['https://u@app.example.com/c.json', 'client_id URL must not contain credentials'],
    ['https://app.example.com/c json', 'client_id URL contains whitespace or control characters'],
    [`https://app.example.com/${'a'.repeat(2100)}`, 'client_id URL is too long'],
  ])('%s', (id, reason) => {
    const verdict = checkMetadataDocumentUrl(id);
    expect(verdict.ok ? undefined : verdict.reason).toBe(reason);
  });
});

describe('the document', () => {
  test.each<[string, Record<string, unknown> | unknown, string | undefined]>([
    ['minimal', base, undefined],
    ['not an object', [base], 'the document is not a JSON object'],
    ['client_id differs', { ...base, client_id: 'https://app.example.com/other.json' }, 'the document’s client_id differs from its URL'],
    ['client_id missing', { redirect_uris: base.redirect_uris }, 'the document’s client_id differs from its URL'],
    ['no redirect_uris', { client_id: URL_ID }, 'redirect_uris must be a non-empty array of strings'],
    [
      'plain http off loopback',
      { ...base, redirect_uris: ['http://app.example.com/cb'] },
      'redirect_uris: redirect URI must use https (http is allowed only on localhost, 127.0.0.1 and [::1])',
    ],
    [
      'private-use scheme',
      { ...base, redirect_uris: ['com.example.app:/cb'] },
      'redirect_uris: redirect URI must use https (or http on localhost / 127.0.0.1 / [::1])',
    ],
    [
      'a secret method',
      { ...base, token_endpoint_auth_method: 'client_secret_basic' },
      'token_endpoint_auth_method must be none or private_key_jwt (a metadata document carries no secret)',
    ],
    // Issue 34: private_key_jwt is allowed, with the jwks_uri its keys are at.
    ['private_key_jwt without keys', { ...base, token_endpoint_auth_method: 'private_key_jwt' }, 'private_key_jwt needs a jwks_uri'],
    ['a secret', { ...base, client_secret: 'x' }, 'a metadata document must not carry a client secret'],
    [
      'client_credentials',
      { ...base, grant_types: ['authorization_code', 'client_credentials'] },
      'grant type client_credentials is not available to a metadata document client',
    ],
    ['refresh only', { ...base, grant_types: ['refresh_token'] }, 'grant_types must include authorization_code'],
    ['implicit', { ...base, response_types: ['token'] }, 'response_types may only contain code'],
    ['two-line name', { ...base, client_name: 'Good app\nClick https://evil' }, 'client_name must be one line without control characters'],
    ['long name', { ...base, client_name: 'x'.repeat(101) }, 'client_name is too long (at most 100 characters)'],
    ['http logo', { ...base, logo_uri: 'http://app.example.com/logo.png' }, 'logo_uri must be an https URL'],
    ['javascript client_uri', { ...base, client_uri: 'javascript:alert(1)' }, 'client_uri must be an https URL'],
    ['dpop_bound_access_tokens not a boolean', { ...base, dpop_bound_access_tokens: 'yes' }, 'dpop_bound_access_tokens must be a boolean'],
  ])('%s', (_label, document, reason) => {
    const verdict = checkMetadataDocument(URL_ID, document);
    expect(verdict.ok ? undefined : verdict.reason).toBe(reason);
  });

  test('a valid document becomes a public client with the scopes of an open registration; the name defaults to the host', () => {
    expect(checkMetadataDocument(URL_ID, base)).toEqual({
      ok: true,
      value: {
        clientId: URL_ID,
        name: 'app.example.com',
        host: 'app.example.com',
        redirectUris: ['https://app.example.com/cb'],
        grantTypes: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access'],
      },
    });
  });

  test('issue 34: dpop_bound_access_tokens (RFC 9449 §5.2) is kept when true', () => {
    const verdict = checkMetadataDocument(URL_ID, { ...base, dpop_bound_access_tokens: true });
    expect(verdict.ok && verdict.value.dpopBoundAccessTokens).toBe(true);
    const off = checkMetadataDocument(URL_ID, { ...base, dpop_bound_access_tokens: false });
    expect(off.ok && off.value).not.toHaveProperty('dpopBoundAccessTokens');
  });

  test('scope narrows the open-registration scopes and never widens them', () => {
    const verdict = checkMetadataDocument(URL_ID, { ...base, scope: 'openid email admin write' });
    expect(verdict.ok && verdict.value.scopes).toEqual(['openid', 'email']);
  });
});

describe('cache lifetime from Cache-Control', () => {
  test.each([
    [undefined, 300],
    ['max-age=60', 60],
    ['public, max-age=120', 120],
    ['max-age=0', 0],
    ['no-store', 0],
    ['no-cache, max-age=600', 0],
    ['max-age=999999', 86400],
    ['max-age=abc', 0],
    ['private', 300],
  ])('%s -> %s s', (header, seconds) => expect(cacheLifetimeSeconds(header)).toBe(seconds));
});
