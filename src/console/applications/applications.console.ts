import { z } from 'zod';
import { Redirect, redirect } from '../../http/outcome';
import { clientsApi as api, resourcesApi } from '../../routes/admin/admin.router';
import { DEFAULT_CLIENT_SCOPES, type BackchannelDelivery, type OAuthClient } from '../../routes/admin/admin.schemas';
import { lines, list } from '../../routes/console/console-kit';
import { text } from '../../routes/pages/page-kit';
import { declareRouter } from '../../routes/route';
import type { RouteDeps } from '../../routes/types';
import { SUPPORTED_SCOPES } from '../../services/oauth/client-secrets';
import { DEFAULT_GRANT_TYPES } from '../../declarations/client-policy';
import { hasPermission, type Principal } from '../../services/principal';
import type { FieldErrors } from '../../views/console/components';
import * as views from '../../views/console/pages';
import { pageEnv } from '../../views/env';
import { consoleAction, consoleForm, consolePage, consoleSection, type ActionInput } from '../action';
import { isClientPreset, presetOf, PRESETS, quickStartSnippet, type ClientPreset } from '../../declarations/client-presets';
import { presetName, renderPresetChooser, renderQuickStart, type QuickStartData } from '../../views/console/quick-start';

/**
 * Console pages of applications (CONTRACT §12, §14), each built from its /api/admin/oauth-clients endpoint (same
 * guard, schemas, service call and audit events). A secret appears only in the answer to the create or rotate post.
 */
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
  // Issue 34: RFC 9126 §6, one checkbox ("true" when checked).
  par: text(10),
  // Issue 34: RFC 9449 §5.2, one checkbox ("true" when checked).
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
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
};

/** The form's fields as the API body, checked by the API's own schema (createClientBody / updateClientBody). */
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

/** A new application's form: the preset's kind, grants and scopes (docs/apps.md). */
const presetValues = (preset: ClientPreset): views.ApplicationValues => ({
  ...valuesOf(),
  type: PRESETS[preset].type,
  grant_types: [...PRESETS[preset].grantTypes],
  scopes: [...PRESETS[preset].scopes],
});

const valuesOf = (c?: OAuthClient): views.ApplicationValues => ({
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

/**
 * The kind radios: confidential (a secret), private_key_jwt (keys, issue 34) or public; the API body says
 * `type` and `token_endpoint_auth_method`.
 */
const kindOf = (kind: string) =>
  kind === 'private_key_jwt' ? { type: 'confidential', token_endpoint_auth_method: 'private_key_jwt' } : { type: kind || undefined };

const x = () => pageEnv().t.console.applications;
const detail = (clientId: string) => `/admin/applications/${encodeURIComponent(clientId)}`;
const powers = (p: Principal, client?: OAuthClient) =>
  client
    ? {
        write: hasPermission(p, 'oauth_clients:write'),
        rotate: hasPermission(p, 'oauth_clients:rotate_secret'),
        delete: hasPermission(p, 'oauth_clients:delete'),
      }
    : { write: true, rotate: false, delete: false };

type Input = Pick<ActionInput<never, never>, 'principal' | 'call'>;
const form = async (
  { principal, call }: Input,
  data: {
    client?: OAuthClient;
    values?: views.ApplicationValues;
    errors?: FieldErrors;
    preset?: ClientPreset | 'custom';
    /** The application's page: its recent back-channel logout deliveries (GET …/backchannel-logout-deliveries). */
    deliveries?: BackchannelDelivery[];
  },
) =>
  consolePage(
    views.renderApplicationForm,
    {
      ...data,
      values: data.values ?? (data.preset && data.preset !== 'custom' ? presetValues(data.preset) : valuesOf(data.client)),
      errors: data.errors ?? {},
      scopes: SUPPORTED_SCOPES,
      resources: (await call(resourcesApi.list, {})).resources,
      may: powers(principal, data.client),
    },
    data.client?.name ?? (data.preset && data.preset !== 'custom' ? st().formTitle(presetName(data.preset)) : x().create),
  );

const st = () => pageEnv().t.console.start;
/** The preset a form was opened or posted with (anything else: none). */
const presetParam = (value: string): ClientPreset | 'custom' | undefined =>
  value === 'custom' ? 'custom' : isClientPreset(value) ? value : undefined;

export function createConsoleApplicationsRouter(deps: RouteDeps) {
  const { config } = deps.ctx;
  /** The quick-start of an application: what it is, its settings and the matching guide's code, filled in. */
  const quickStartOf = async (call: Input['call'], client: OAuthClient, secret?: string): Promise<QuickStartData> => {
    const preset = presetOf({ type: client.type, grantTypes: client.grant_types, redirectUris: client.redirect_uris });
    const identifier = client.allowed_resources[0];
    const resource = identifier ? (await call(resourcesApi.list, {})).resources.find((r) => r.identifier === identifier) : undefined;
    const issuer = config.oidcIssuer;
    return {
      client,
      preset,
      secret,
      issuer,
      discoveryUrl: `${issuer}/.well-known/openid-configuration`,
      snippet: quickStartSnippet(preset, {
        issuer,
        clientId: client.client_id,
        redirectUri: client.redirect_uris[0],
        resource: identifier,
        resourceScope: resource?.scopes[0],
      }),
    };
  };
  const secretOnce = async (
    call: Input['call'],
    heading: string,
    client: OAuthClient,
    secret: string | undefined,
    title: string,
    status = 200,
  ) => consolePage(views.renderSecretOnce, { heading, ...(await quickStartOf(call, client, secret)) }, title, status);
  const routes = consoleSection('applications', deps.ctx, [
    consoleAction(api.list, {
      path: '/applications',
      done: (r, { principal }) =>
        consolePage(views.renderApplications, { ...r, canWrite: hasPermission(principal, 'oauth_clients:write') }, x().title),
    }),
    // First what it is (the presets), then its form.
    consoleForm(api.create, {
      path: '/applications/new',
      form: z.object({ preset: text(20) }),
      page: (a) => {
        const preset = presetParam(a.form.preset);
        return preset ? form(a, { preset }) : consolePage(renderPresetChooser, {}, st().chooseTitle);
      },
    }),
    consoleAction(api.create, {
      path: '/applications',
      form: clientForm,
      input: (f) => ({ ...asBody(f), ...kindOf(f.type), preset: isClientPreset(f.preset) ? f.preset : undefined }),
      field: 'redirect_uris',
      invalid: ({ values, errors }, a) =>
        form(a, { values: { ...values, type: values.type || 'confidential' }, errors, preset: presetParam(values.preset) ?? 'custom' }),
      // The secret is shown in this answer only (no-store, not a redirect target, never in a URL or cookie).
      done: (r, { call }) => secretOnce(call, x().createdHeading(r.client.name), r.client, r.client_secret, x().createdTitle, 201),
    }),
    // The application's page: its form, and its recent back-channel logout deliveries from their own endpoint.
    consoleAction(api.get, {
      path: '/applications/:clientId',
      done: async ({ client }, a) =>
        form(a, { client, deliveries: (await a.call(api.backchannelDeliveries, { params: a.params })).deliveries }),
    }),
    consoleAction(api.get, {
      path: '/applications/:clientId/quick-start',
      summary: 'Console: the quick-start of an application',
      done: async ({ client }, { call }) =>
        consolePage(renderQuickStart, await quickStartOf(call, client), st().quickStartTitle(client.name)),
    }),
    consoleAction(api.update, {
      path: '/applications/:clientId',
      form: clientForm,
      input: asBody,
      field: 'redirect_uris',
      invalid: async ({ values, errors }, a) => {
        const { client } = await a.call(api.get, { params: a.params });
        return form(a, { client, values: { ...values, type: client.type }, errors });
      },
      done: (_r, { params }) => redirect(detail(params.clientId), x().saved),
    }),
    consoleAction(api.rotateSecret, {
      path: '/applications/:clientId/rotate',
      confirm: async ({ call, params }) => ({
        title: x().rotateTitle((await call(api.get, { params })).client.name),
        text: x().rotateText,
        button: x().rotate,
      }),
      before: async ({ call, params }) => {
        const { client } = await call(api.get, { params });
        const refused = !client.is_active
          ? x().rotateDeactivated
          : client.type === 'public'
            ? x().publicNoRotate
            : client.token_endpoint_auth_method === 'private_key_jwt'
              ? x().keysNoRotate
              : undefined;
        return refused ? new Redirect(detail(params.clientId), { kind: 'error', message: refused }) : undefined;
      },
      back: (p) => detail(p.clientId),
      done: async (r, { call, params }) => {
        const { client } = await call(api.get, { params });
        return secretOnce(call, x().rotatedHeading(client.name), client, r.client_secret, x().rotatedTitle);
      },
    }),
    consoleAction(api.deactivate, {
      path: '/applications/:clientId/deactivate',
      confirm: async ({ call, params }) => ({
        title: x().deactivateTitle((await call(api.get, { params })).client.name),
        text: x().deactivateText,
        button: x().deactivate,
      }),
      back: (p) => detail(p.clientId),
      done: (_r, { params }) => redirect(detail(params.clientId), x().deactivated),
    }),
  ]);
  return declareRouter(deps, routes, { tags: ['Console'] });
}
