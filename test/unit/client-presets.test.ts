import fs from 'node:fs';
import path from 'node:path';
import { CLIENT_PRESETS, PRESETS, presetOf, quickStartSnippet } from '../../src/declarations/client-presets';

/** The presets (docs/apps.md): what each is read back as, and each quick-start held to its guide's code. */
const ROOT = path.join(__dirname, '../..');
const VALUES = {
  issuer: 'https://id.acme.test',
  clientId: 'client_QUICKSTART',
  redirectUri: 'https://acme.test/cb',
  resource: 'https://api.acme.test/',
};

test.each(CLIENT_PRESETS)('%s: every line of the quick-start without a filled-in value is a line of its guide', (preset) => {
  const guide = fs.readFileSync(path.join(ROOT, PRESETS[preset].guide), 'utf8');
  const guideLines = new Set(guide.split('\n').map((l) => l.trim()));
  const { code } = quickStartSnippet(preset, VALUES);
  const own = code.split('\n').filter((l) => !Object.values(VALUES).some((v) => l.includes(v)) && !l.includes('process.env.CLIENT_SECRET'));
  expect(own.length).toBeGreaterThan(0);
  expect(own.filter((l) => !guideLines.has(l.trim()))).toEqual([]);
  expect(code).toContain(`'${VALUES.clientId}'`);
});

test("the SPA quick-start is the guide's settings.js with the values replaced, line for line", () => {
  const guide = fs.readFileSync(path.join(ROOT, 'docs/guide-spa.md'), 'utf8');
  const block = /```js\n(\/\/ settings\.js[\s\S]*?)```/.exec(guide)?.[1]?.trimEnd();
  const filled = quickStartSnippet('spa', {
    issuer: 'https://sso.example.com',
    clientId: 'client_…',
    redirectUri: 'https://app.example.com/callback',
    resource: 'https://invoices.example.com/',
  }).code;
  expect(filled).toBe(block);
});

test.each([
  ['web', 'confidential', ['authorization_code', 'refresh_token'], ['https://app.example.com/callback']],
  ['spa', 'public', ['authorization_code', 'refresh_token'], ['http://localhost:5173/callback']],
  ['spa', 'public', ['authorization_code'], ['https://app.example.com/callback']],
  ['native', 'public', ['authorization_code', 'refresh_token'], ['http://127.0.0.1/callback']],
  ['native', 'public', ['authorization_code'], ['http://[::1]:8080/callback']],
  ['native', 'public', ['authorization_code'], ['com.example.app:/callback']],
  ['m2m', 'confidential', ['client_credentials'], []],
  ['device', 'public', ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'], []],
  ['device', 'confidential', ['urn:ietf:params:oauth:grant-type:device_code', 'authorization_code'], ['https://tv.example.com/cb']],
] as const)('an application is read back as %s from its registration', (preset, type, grantTypes, redirectUris) => {
  expect(presetOf({ type, grantTypes, redirectUris })).toBe(preset);
});

test('each preset is read back as itself from its own defaults and example redirect URI', () => {
  for (const p of CLIENT_PRESETS) {
    const d = PRESETS[p];
    expect([p, presetOf({ type: d.type, grantTypes: d.grantTypes, redirectUris: d.redirectExample ? [d.redirectExample] : [] })]).toEqual([
      p,
      p,
    ]);
  }
});
