import fs from 'node:fs';
import path from 'node:path';
import { SETTINGS } from '../../src/declarations/settings';
import { isValidationKey, messagesFor, saidOfIssue, validationKeyOf, validationText, type ValidationKey } from '../../src/i18n';
import { createApiResourceBody, createClientBody } from '../../src/wire/admin/admin.schemas';
import { auditEventsQuery } from '../../src/wire/audit/audit.schemas';
import { mfaLoginBody, optionalProofBody, passkeyRegisterBody, requiredProofBody, totpConfirmBody } from '../../src/wire/auth/mfa.schemas';
import { assignRoleBody, createRoleBody } from '../../src/wire/rbac/rbac.schemas';
import { samlAppBody } from '../../src/wire/saml/saml-apps.schemas';
import { createScimConnectionBody, setScimGroupRolesBody } from '../../src/wire/scim/scim-admin.schemas';
import { changeSettingsBody } from '../../src/wire/settings/settings.schemas';
import { inviteUserBody } from '../../src/wire/users/users.schemas';
import { createWebhookBody } from '../../src/wire/webhooks/webhooks.schemas';
import { declaredMessages, isZodSchema } from '../helpers/zod-messages';

/**
 * Issue 32, item 8: every refusal of the API's schemas has a catalogue key (src/i18n saidOfIssue), whatever English
 * message the schema gave it, so a console form or page says it in German; the JSON keeps the schema's English. The
 * API's schemas, the page schemas (second-factor proofs, the audit log's date range, role assignment) and the console
 * forms' (SCIM, users, webhooks, roles, settings) are all covered: by refused inputs below, and by reading every
 * refinement each schema declares (zod keys its own checks by what they check; a refinement only by its catalogue key).
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
  // The second-factor proofs of the /account and /login/mfa pages and their API.
  ['mfa: two proofs for a change', optionalProofBody, { password: 'a', code: '123456' }],
  ['mfa: no proof for a removal', requiredProofBody, {}],
  ['mfa: two proofs beside the new code', totpConfirmBody, { code: '123456', password: 'a', recovery_code: 'abcd-efgh' }],
  ['mfa: passkey with two proofs', passkeyRegisterBody, { password: 'a', recovery_code: 'abcd-efgh' }],
  ['mfa: second step with nothing', mfaLoginBody, { mfa_token: 'x' }],
  ['mfa: wrong types', requiredProofBody, { password: 5, code: 'abc', recovery_code: 7 }],
  // The audit log's filter (the console's date range).
  ['audit: from after to', auditEventsQuery, { from: '2026-11-22T10:00:00Z', to: '2026-11-21T10:00:00Z' }],
  ['audit: not dates', auditEventsQuery, { from: 'yesterday', to: 'today', type: 'nope', limit: 'many' }],
  // The console's SCIM forms.
  ['scim: connection', createScimConnectionBody, { name: '', description: 'a\nb' }],
  ['scim: connection too long', createScimConnectionBody, { name: 'x'.repeat(101), extra: 1 }],
  ['scim: group roles', setScimGroupRolesBody, { role_ids: ['nope', 5] }],
  ['scim: group roles not a list', setScimGroupRolesBody, { role_ids: 'x' }],
  // Users, roles, webhooks, settings.
  ['users: invite', inviteUserBody, { email: 'nope', first_name: '', last_name: 5, role_ids: ['x'] }],
  ['roles: create', createRoleBody, { name: '', permissions: ['nope'], api_scopes: [{ resource: 5 }] }],
  ['roles: assign', assignRoleBody, { role_id: '00000000-0000-4000-8000-000000000000', role: 'admin' }],
  ['webhooks: create', createWebhookBody, { url: 'ftp://x', events: ['nope'], enabled: 'yes' }],
  ['settings: change', changeSettingsBody, { registration: 'maybe', invitation_ttl_hours: 0.5, allowed_origins: ['nope'] }],
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

/** The schemas a person's input meets: the API's, the console forms' and the declarations' (settings among them). */
function everySchema(): Array<[string, unknown]> {
  const root = path.join(__dirname, '../..');
  const files = (dir: string, pattern: RegExp) =>
    fs
      .readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => pattern.test(f))
      .map((f) => path.join(dir, f));
  const modules = [
    ...files('src/wire', /\.schemas\.ts$/),
    ...files('src/console', /\.(form|console)\.ts$/),
    ...files('src/declarations', /\.ts$/),
  ];
  expect(modules.length).toBeGreaterThan(25);
  const found: Array<[string, unknown]> = [];
  for (const file of modules) {
    const mod = require(path.join(root, file)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) if (isZodSchema(value)) found.push([`${file}#${name}`, value]);
  }
  for (const s of SETTINGS) found.push([`setting ${s.name}`, s.schema]);
  return found;
}

test('every refinement any schema declares is said by a catalogue key, in English and in German', () => {
  const schemas = everySchema();
  expect(schemas.length).toBeGreaterThan(150);
  const refinements = schemas.flatMap(([where, schema]) =>
    declaredMessages(schema)
      .filter((m) => m.custom)
      .map((m) => ({ where, ...m })),
  );
  // Sanity: the walk reaches the refinements this file's refused inputs meet (so an empty list is not a pass).
  expect(refinements.map((r) => r.message)).toEqual(
    expect.arrayContaining(['from must be before to', 'Send one of password, code, recovery_code or passkey']),
  );
  const keyOf = (r: (typeof refinements)[number]): ValidationKey | undefined => {
    if (r.saidKey !== undefined) return isValidationKey(r.saidKey) ? r.saidKey : undefined;
    const field = r.path.join('.');
    // As saidOfIssue reads it: the sentence itself, or the sentence after the name of the field it stands beside.
    return (
      validationKeyOf(r.message) ??
      (r.message.startsWith(`${field} `) && !r.path.includes('*') ? validationKeyOf(r.message.slice(field.length + 1)) : undefined)
    );
  };
  const unsaid = [...new Set(refinements.filter((r) => keyOf(r) === undefined).map((r) => `${r.where} ${r.path.join('.')}: ${r.message}`))];
  expect(unsaid).toEqual([]);
  for (const key of new Set(refinements.map(keyOf))) {
    const english = validationText(messagesFor('en'), key!, {});
    const german = validationText(messagesFor('de'), key!, {});
    expect([key, german]).not.toEqual([key, english]);
    expect([key, german]).not.toEqual([key, expect.stringMatching(/\b(must|the|is|not|Send|Give)\b/)]);
  }
});
