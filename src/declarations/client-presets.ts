/**
 * What an application is (docs/apps.md "Start from what it is"): the five presets an application is created from, each
 * declared once here. The console's create form starts from one, `POST /api/admin/oauth-clients` accepts one as
 * `preset` (it fills in what the body leaves out), and the quick-start shown after creation (and on the application's
 * page later) is the matching guide's code with the application's values filled in.
 *
 * A preset is a starting point, not a stored property: what an application is afterwards is read from its registration
 * (`presetOf`), so it can never disagree with what the application may do.
 */
import { isPrivateUseRedirectUri } from '../lib/redirect-uri';
import { DEVICE_CODE_GRANT, type ClientType, type GrantType } from './client-policy';

export const CLIENT_PRESETS = ['web', 'spa', 'native', 'm2m', 'device'] as const;
export type ClientPreset = (typeof CLIENT_PRESETS)[number];

export interface PresetDeclaration {
  /** confidential: a secret (client_secret_basic); public: none, the client_id alone. */
  type: ClientType;
  grantTypes: readonly GrantType[];
  scopes: readonly string[];
  /** Whether the application receives the sign-in at a redirect URI (authorization code with PKCE S256). */
  redirects: boolean;
  /** The redirect URI a reader is shown as an example (the form's hint, the guide's value). */
  redirectExample?: string;
  /** Browser origins are the point (a single-page app): the form shows the field. */
  origins: boolean;
  /** The guide in docs/ whose code the quick-start fills in. */
  guide: string;
}

const SIGN_IN_SCOPES = ['openid', 'profile', 'email'] as const;

export const PRESETS: Readonly<Record<ClientPreset, PresetDeclaration>> = {
  web: {
    type: 'confidential',
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: SIGN_IN_SCOPES,
    redirects: true,
    redirectExample: 'https://app.example.com/callback',
    origins: false,
    guide: 'docs/guide-third-party-apps.md',
  },
  spa: {
    type: 'public',
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: SIGN_IN_SCOPES,
    redirects: true,
    redirectExample: 'http://localhost:5173/callback',
    origins: true,
    guide: 'docs/guide-spa.md',
  },
  native: {
    type: 'public',
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: SIGN_IN_SCOPES,
    redirects: true,
    // RFC 8252 §7.3: a loopback IP literal; any port is accepted at sign-in.
    redirectExample: 'http://127.0.0.1/callback',
    origins: false,
    guide: 'docs/guide-native-cli.md',
  },
  m2m: {
    type: 'confidential',
    grantTypes: ['client_credentials'],
    // No user: the token names no one, and an API's token carries only that API's scopes.
    scopes: ['read'],
    redirects: false,
    origins: false,
    guide: 'docs/guide-machine-to-machine.md',
  },
  device: {
    type: 'public',
    grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
    scopes: ['openid', 'profile'],
    redirects: false,
    origins: false,
    guide: 'docs/guide-device.md',
  },
};

export const isClientPreset = (value: string): value is ClientPreset => CLIENT_PRESETS.some((preset) => preset === value);

/** The loopback IP literals of RFC 8252 §7.3 (a native app's redirect), as opposed to a web origin on localhost. */
const isLoopbackLiteral = (uri: string): boolean => /^http:\/\/(127\.0\.0\.1|\[::1\])(:\d+)?\//.test(uri);

/**
 * What an application is, read from its registration: the device grant makes a device app; client credentials alone a
 * machine; a confidential application that signs people in a web app with a server; a public one a native app when it
 * receives the sign-in at a loopback IP literal or a private-use scheme (RFC 8252), else a single-page app.
 */
export function presetOf(client: { type: ClientType; grantTypes: readonly string[]; redirectUris: readonly string[] }): ClientPreset {
  if (client.grantTypes.includes(DEVICE_CODE_GRANT)) return 'device';
  if (!client.grantTypes.includes('authorization_code')) return 'm2m';
  if (client.type === 'confidential') return 'web';
  return client.redirectUris.some((u) => isPrivateUseRedirectUri(u) || isLoopbackLiteral(u)) ? 'native' : 'spa';
}

/** What a quick-start fills in. */
export interface QuickStartValues {
  issuer: string;
  clientId: string;
  redirectUri?: string;
  /** The first API the application may ask tokens for (RFC 8707), if any, and one of its scopes. */
  resource?: string;
  resourceScope?: string;
}

/** A JavaScript snippet of these lines. */
const js = (lines: string[]) => ({ language: 'js' as const, code: lines.join('\n') });

const q = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * The matching guide's code with the application's values: the same calls as the guide (test/unit/client-presets.test.ts
 * holds every line without a filled-in value to its guide). A secret is never part of it: it is read from the
 * environment, where the reader puts the secret shown once.
 */
export function quickStartSnippet(preset: ClientPreset, v: QuickStartValues): { language: 'js' | 'sh'; code: string } {
  const resource = v.resource ?? 'https://invoices.example.com/';
  const resourceLine = v.resource
    ? `  resource: ${q(v.resource)},`
    : '  resource: undefined, // the identifier of an API once the application may call one ("Allowed APIs")';
  // A confidential client's discovery: the secret comes from the environment.
  const confidentialDiscovery = [
    "import * as client from 'openid-client';",
    `const config = await client.discovery(new URL(${q(v.issuer)}), ${q(v.clientId)}, process.env.CLIENT_SECRET);`,
  ];
  switch (preset) {
    case 'spa':
      return js([
        '// settings.js: what the registration answered.',
        `export const issuer = ${q(v.issuer)};`,
        "export const api = 'https://invoices.example.com/invoices';",
        'export const settings = {',
        `  clientId: ${q(v.clientId)},`,
        `  redirectUri: ${q(v.redirectUri ?? PRESETS.spa.redirectExample ?? '')},`,
        resourceLine,
        '  // Local development switch: oauth4webapi refuses a server on plain http unless told so. This turns it on for a',
        '  // server at http://localhost or http://127.0.0.1 only, never for anything else.',
        '  insecure: /^http:\\/\\/(localhost|127\\.0\\.0\\.1)(:\\d+)?$/.test(issuer),',
        '};',
      ]);
    case 'web':
      return js(confidentialDiscovery);
    case 'native':
      return js([
        `const issuer = ${q(v.issuer)};`,
        `const clientId = ${q(v.clientId)};`,
        "import * as client from 'openid-client';",
        'const config = await client.discovery(new URL(issuer), clientId, undefined, client.None());   // public: no secret',
        'const server = http.createServer();',
        "await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));                      // any free port",
        'const redirectUri = `http://127.0.0.1:${server.address().port}/callback`;',
      ]);
    case 'm2m':
      return js([
        ...confidentialDiscovery,
        `const tokens = await client.clientCredentialsGrant(config, { resource: ${q(resource)}, scope: ${q(v.resourceScope ?? 'invoices:read')} });`,
      ]);
    case 'device':
      return js([
        "import * as client from 'openid-client';",
        `const config = await client.discovery(new URL(${q(v.issuer)}), ${q(v.clientId)}, undefined, client.None());`,
        "const started = await client.initiateDeviceAuthorization(config, { scope: 'openid profile' });",
        'console.log(`Open ${started.verification_uri} and enter ${started.user_code}`);   // or show verification_uri_complete as a QR code',
        'const tokens = await client.pollDeviceAuthorizationGrant(config, started);       // honours interval and slow_down',
        'console.log(`Signed in as ${tokens.claims().sub}`);',
      ]);
  }
}
