import { z } from 'zod';
import { DEFAULT_GRANT_TYPES } from '../../declarations/client-policy';
import { isClientPreset, PRESETS, type ClientPreset } from '../../declarations/client-presets';
import { DEFAULT_CLIENT_SCOPES, type OAuthClient } from '../../wire/admin/admin.schemas';
import type { ApplicationValues } from '../../views/console/pages';
import { formMapping, lines, list, text } from '../action';

/** The application form (CONTRACT §12): its fields, as the API's body (createClientBody / updateClientBody) and back. */
const clientForm = z.object({
  name: text(300),
  type: text(20),
  grant_types: list(),
  redirect_uris: text(10_000),
  post_logout_redirect_uris: text(10_000),
  allowed_origins: text(10_000),
  scopes: list(),
  allowed_resources: list(),
  // Issue 34: a private_key_jwt application's keys (a JWK Set as JSON) or their URL.
  jwks: text(50_000),
  jwks_uri: text(2048),
  // Issue 34: RFC 9126 §6 and RFC 9449 §5.2, one checkbox each ("true" when checked).
  par: text(10),
  dpop: text(10),
  // What the application is (a hidden field of a preset's form): the API's `preset`.
  preset: text(20),
  // Issue 34: OpenID Connect Back-Channel Logout; the address is judged by the API's own rules.
  backchannel_logout_uri: text(2048),
  backchannel_logout_session_required: text(10),
});
type ClientForm = z.output<typeof clientForm>;

/** Issue 34: the JWK Set field as JSON (text that is not JSON is handed on as it is: the API's schema refuses it). */
const jwksOf = (value: string): unknown => {
  if (!value.trim()) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};

const asBody = (f: ClientForm) => ({
  jwks: jwksOf(f.jwks),
  jwks_uri: f.jwks_uri.trim() || undefined,
  require_pushed_authorization_requests: f.par === 'true',
  dpop_bound_access_tokens: f.dpop === 'true',
  name: f.name,
  grant_types: f.grant_types,
  redirect_uris: lines(f.redirect_uris),
  post_logout_redirect_uris: lines(f.post_logout_redirect_uris),
  // Empty: the default (the redirect URIs' origins of a public application).
  allowed_origins: lines(f.allowed_origins).length ? lines(f.allowed_origins) : null,
  scopes: f.scopes,
  allowed_resources: f.allowed_resources,
  // Empty: none (null removes an address the application had).
  backchannel_logout_uri: f.backchannel_logout_uri.trim() || null,
  backchannel_logout_session_required: f.backchannel_logout_session_required === 'true',
});

/**
 * The kind radios: confidential (a secret), private_key_jwt (keys, issue 34) or public; the API body says
 * `type` and `token_endpoint_auth_method`.
 */
const kindOf = (kind: string) =>
  kind === 'private_key_jwt' ? { type: 'confidential', token_endpoint_auth_method: 'private_key_jwt' } : { type: kind || undefined };

export const createBody = formMapping({
  form: clientForm,
  input: (f) => ({ ...asBody(f), ...kindOf(f.type), preset: isClientPreset(f.preset) ? f.preset : undefined }),
  field: 'redirect_uris',
});
export const updateBody = formMapping({ form: clientForm, input: asBody, field: 'redirect_uris' });

export const valuesOf = (c?: OAuthClient): ApplicationValues => ({
  name: c?.name ?? '',
  type: c?.type ?? 'confidential',
  grant_types: c?.grant_types ?? [...DEFAULT_GRANT_TYPES],
  redirect_uris: (c?.redirect_uris ?? []).join('\n'),
  post_logout_redirect_uris: (c?.post_logout_redirect_uris ?? []).join('\n'),
  allowed_origins: c && !c.allowed_origins_default ? c.allowed_origins.join('\n') : '',
  scopes: c?.scopes ?? [...DEFAULT_CLIENT_SCOPES],
  allowed_resources: c?.allowed_resources ?? [],
  jwks: c?.jwks ? JSON.stringify(c.jwks, null, 2) : '',
  jwks_uri: c?.jwks_uri ?? '',
  par: c?.require_pushed_authorization_requests ? 'true' : '',
  dpop: c?.dpop_bound_access_tokens ? 'true' : '',
  backchannel_logout_uri: c?.backchannel_logout_uri ?? '',
  backchannel_logout_session_required: c?.backchannel_logout_session_required ? 'true' : '',
});

/** A new application's form: the preset's kind, grants and scopes (docs/apps.md). */
export const presetValues = (preset: ClientPreset): ApplicationValues => ({
  ...valuesOf(),
  type: PRESETS[preset].type,
  grant_types: [...PRESETS[preset].grantTypes],
  scopes: [...PRESETS[preset].scopes],
});

/** The preset a form was opened or posted with (anything else: none). */
export const presetParam = (value: string): ClientPreset | 'custom' | undefined =>
  value === 'custom' ? 'custom' : isClientPreset(value) ? value : undefined;
