import { createApiResourceBody, createClientBody } from '../../src/routes/admin/admin.schemas';
import { samlAppBody } from '../../src/routes/saml/saml-apps.schemas';
import { messagesFor, saidOfIssue, validationText } from '../../src/i18n';

/**
 * Issue 32, item 8: every refusal of the API's schemas has a catalogue key (src/i18n saidOfIssue), whatever English
 * message the schema gave it, so a console form says it in German; the JSON keeps the schema's English.
 */
const BAD: Array<[string, { safeParse(v: unknown): { success: boolean; error?: { issues: unknown[] } } }, unknown]> = [
  ['client: wrong types', createClientBody, { name: 5, redirect_uris: 'x', grant_types: [7], scopes: 3, type: 'x', jwks_uri: 5 }],
  ['client: too long, empty', createClientBody, { name: '', redirect_uris: Array(21).fill('https://a.example.com/cb'), grant_types: [] }],
  ['client: name too long', createClientBody, { name: 'x'.repeat(101), grant_types: ['client_credentials'], type: 'confidential' }],
  ['client: unknown scope', createClientBody, { name: 'a', grant_types: ['client_credentials'], scopes: ['nope'] }],
  [
    'client: bad keys',
    createClientBody,
    { name: 'a', grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] } },
  ],
  [
    'client: keys without private_key_jwt',
    createClientBody,
    { name: 'a', grant_types: ['client_credentials'], jwks_uri: 'https://k.example.com' },
  ],
  [
    'client: preset mismatch',
    createClientBody,
    { name: 'a', preset: 'spa', type: 'confidential', redirect_uris: ['https://a.example.com/cb'] },
  ],
  ['resource: bad', createApiResourceBody, { identifier: 'nope', name: '', scopes: ['openid', 'a b'], access_token_ttl_s: 1.5 }],
  ['saml: wrong types', samlAppBody, { name: 1, entity_id: 2, acs_urls: 'x', sign_response: 'yes' }],
  ['saml: empty, whitespace', samlAppBody, { name: 'a', entity_id: 'a b', acs_urls: [{ url: 'http://sp.example.com/acs', index: -1 }] }],
  [
    'saml: metadata and fields',
    samlAppBody,
    { name: 'a', metadata_xml: '<x/>', metadata_url: 'https://m.example.com', entity_id: 'https://e' },
  ],
  ['saml: unknown field', samlAppBody, { name: 'a', entity_id: 'https://e', acs_urls: [{ url: 'https://e/acs' }], nope: 1 }],
];

test.each(BAD)('%s: every issue has a catalogue key and a German sentence', (_name, schema, body) => {
  const parsed = schema.safeParse(body);
  expect(parsed.success).toBe(false);
  const issues = parsed.error!.issues as Parameters<typeof saidOfIssue>[0][];
  expect(issues.length).toBeGreaterThan(0);
  const unsaid = issues.filter((issue) => saidOfIssue(issue) === undefined).map((i) => `${i!.path?.join('.')}: ${i!.message}`);
  expect(unsaid).toEqual([]);
  for (const issue of issues) {
    const said = saidOfIssue(issue)!;
    const german = validationText(messagesFor('de'), said.key, said.params);
    expect(german).not.toBe(validationText(messagesFor('en'), said.key, said.params));
    expect(german).not.toMatch(/\b(must|the|is|not)\b/);
  }
});

test('zod checks are keyed by what they check, with their bounds', () => {
  const said = (schema: (typeof BAD)[number][1], body: unknown) => saidOfIssue(schema.safeParse(body).error!.issues[0] as never);
  expect(said(createApiResourceBody, { identifier: 'https://a.example.com', name: 'a', scopes: Array(101).fill('s') })).toEqual({
    key: 'fieldMaxItems',
    params: { max: '100' },
  });
  expect(said(samlAppBody, { name: 'a', entity_id: '', acs_urls: [{ url: 'https://e/acs' }] })).toEqual({ key: 'settingNotEmpty' });
  expect(said(samlAppBody, { name: 'a', entity_id: 5, acs_urls: [{ url: 'https://e/acs' }] })).toEqual({ key: 'fieldString' });
});
