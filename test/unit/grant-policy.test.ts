import { consentShortfall, widenedGrant } from '../../src/services/oauth/grant-policy';

/** CONTRACT §23 "Grants are bound to what was consented" as a table: grant x client x request -> what is missing. */
describe('consentShortfall', () => {
  const grant = {
    scopes: ['openid', 'profile', 'invoices:read'],
    resources: ['https://invoices.test/'],
    redirectUris: ['https://app.test/cb', 'http://127.0.0.1:4000/callback'],
  };
  const admin = { registration: 'admin' as const };
  const dynamic = { registration: 'dynamic' as const };
  const cimd = { registration: 'metadata_document' as const };
  test.each([
    ['no grant', undefined, admin, { scopes: ['openid'] }, 'no_grant'],
    ['scopes within the grant', grant, admin, { scopes: ['openid'] }, undefined],
    ['a scope beyond the grant', grant, admin, { scopes: ['openid', 'email'] }, 'scope'],
    ['the consented API', grant, admin, { scopes: ['openid'], resource: 'https://invoices.test/' }, undefined],
    ['another API', grant, admin, { scopes: ['openid'], resource: 'https://payroll.test/' }, 'resource'],
    ['an API on a sign-in-only grant', { ...grant, resources: [] }, admin, { scopes: [], resource: 'https://invoices.test/' }, 'resource'],
    ['no API named', grant, admin, { scopes: ['openid'], resource: null }, undefined],
    ['admin client, unconsented redirect URI', grant, admin, { scopes: ['openid'], redirectUri: 'https://app.test/other' }, undefined],
    ['dynamic client, consented redirect URI', grant, dynamic, { scopes: ['openid'], redirectUri: 'https://app.test/cb' }, undefined],
    ['dynamic client, another redirect URI', grant, dynamic, { scopes: ['openid'], redirectUri: 'https://evil.test/cb' }, 'redirect_uri'],
    ['CIMD client, another redirect URI', grant, cimd, { scopes: ['openid'], redirectUri: 'https://app.test/cb2' }, 'redirect_uri'],
    [
      'dynamic client, loopback on another port',
      grant,
      dynamic,
      { scopes: ['openid'], redirectUri: 'http://127.0.0.1:5999/callback' },
      undefined,
    ],
    [
      'dynamic client, loopback on another path',
      grant,
      dynamic,
      { scopes: ['openid'], redirectUri: 'http://127.0.0.1:4000/other' },
      'redirect_uri',
    ],
    [
      'dynamic client, a pre-upgrade grant (no URI recorded)',
      { ...grant, redirectUris: [] },
      dynamic,
      { scopes: ['openid'], redirectUri: 'https://app.test/cb' },
      'redirect_uri',
    ],
    ['the token endpoint (no redirect URI judged)', grant, dynamic, { scopes: [], resource: 'https://invoices.test/' }, undefined],
  ] as const)('%s -> %s', (_name, g, client, ask, expected) => {
    expect(consentShortfall(g, client, ask)).toBe(expected);
  });
});

describe('widenedGrant', () => {
  test('the union of what was there and what was approved; a loopback URI on another port is not added twice', () => {
    const before = { scopes: ['openid'], resources: ['https://a.test/'], redirectUris: ['http://127.0.0.1:4000/cb'] };
    expect(widenedGrant(before, { scopes: ['email'], resource: 'https://b.test/', redirectUri: 'http://127.0.0.1:4100/cb' })).toEqual({
      scopes: ['openid', 'email'],
      resources: ['https://a.test/', 'https://b.test/'],
      redirectUris: ['http://127.0.0.1:4000/cb'],
    });
    expect(widenedGrant(undefined, { scopes: ['openid'], redirectUri: 'https://app.test/cb' })).toEqual({
      scopes: ['openid'],
      resources: [],
      redirectUris: ['https://app.test/cb'],
    });
  });
});
