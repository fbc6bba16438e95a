import type { OAuthClientRow } from '../../src/db/repositories/oauth-clients.repo';
import { presentClient } from '../../src/routes/admin/admin.presenters';
import type { ConsoleFrame } from '../../src/views/console/layout';
import { renderApplicationForm, renderApplications, type ConsoleClient } from '../../src/views/console/pages';

/** How the console shows where an application came from (CONTRACT §13: `registration`), when the row records it. */
const frame: ConsoleFrame = { title: 'Applications', section: 'applications', email: 'admin@example.test', csrf: 'csrf' };
const row: OAuthClientRow = {
  clientId: 'client_x',
  name: 'MCP tool',
  secretHash: null,
  type: 'public',
  grantTypes: ['authorization_code', 'refresh_token'],
  allowedResources: [],
  redirectUris: ['http://127.0.0.1/cb'],
  scopes: ['openid'],
  postLogoutRedirectUris: [],
  allowedOrigins: null,
  corsOrigins: ['http://127.0.0.1'],
  isActive: true,
  registration: 'admin',
  registrationAccessTokenHash: null,
  clientUri: null,
  logoUri: null,
  tokenEndpointAuthMethod: 'none',
  jwks: null,
  jwksUri: null,
  requirePushedAuthorizationRequests: false,
  backchannelLogoutUri: null,
  backchannelLogoutSessionRequired: false,
  dpopBoundAccessTokens: false,
  lastUsedAt: null,
  createdAt: new Date('2026-11-01T00:00:00Z'),
  updatedAt: new Date('2026-11-01T00:00:00Z'),
};
/** The views take the API's wire shape. */
const base: ConsoleClient = presentClient(row);
const detail = (client: ConsoleClient) =>
  renderApplicationForm(frame, {
    client,
    values: {
      name: '',
      type: 'public',
      grant_types: [],
      redirect_uris: '',
      post_logout_redirect_uris: '',
      allowed_origins: '',
      scopes: [],
      allowed_resources: [],
      jwks: '',
      jwks_uri: '',
      par: '',
      dpop: '',
      backchannel_logout_uri: '',
      backchannel_logout_session_required: '',
    },
    errors: {},
    scopes: ['openid'],
    resources: [],
    may: { write: false, rotate: true, delete: true },
  });

test.each([
  ['dynamic', 'self-registered', 'Dynamically (RFC 7591), not reviewed by an administrator'],
  ['metadata_document', 'metadata document', 'From its Client ID Metadata Document'],
  ['admin', undefined, 'By an administrator'],
] as const)('registration %s: the list and the detail say so', (registration, listMark, detailText) => {
  const client = { ...base, registration };
  const list = renderApplications(frame, { clients: [client], canWrite: true });
  if (listMark) expect(list).toContain(listMark);
  else expect(list).not.toContain('self-registered');
  expect(detail(client)).toContain(detailText);
});

test('a public client offers no secret rotation; a confidential one does', () => {
  const page = detail(base);
  expect(page).not.toContain('Rotate secret');
  expect(detail({ ...base, type: 'confidential' })).toContain('Rotate secret');
});
