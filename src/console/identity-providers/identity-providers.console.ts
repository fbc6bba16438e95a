import { z } from 'zod';
import { redirect } from '../../http/outcome';
import { checked } from '../../routes/console/console-kit';
import { identityProvidersApi as api } from '../../routes/federation/identity-providers.router';
import type { IdentityProvider } from '../../routes/federation/identity-providers.schemas';
import { text } from '../../routes/pages/page-kit';
import { declareRouter } from '../../routes/route';
import type { RouteDeps } from '../../routes/types';
import { PROVIDER_PRESETS } from '../../services/federation/providers.service';
import { callbackUrlOf, GITHUB_DEFAULTS, OIDC_DEFAULT_SCOPES } from '../../services/federation/relying-party';
import type { FieldErrors } from '../../views/console/components';
import * as views from '../../views/console/identity-providers';
import { pageEnv } from '../../views/env';
import { consoleAction, consoleForm, consolePage, consoleSection } from '../action';

/**
 * Console pages of identity providers (CONTRACT §16, §14), each built from its /api/admin/identity-providers endpoint
 * (permission system:manage_identity_providers, the same audit events). The client secret is write-only: the form
 * never shows it, not even after a refused post.
 */
const flag = () => text(10).transform(checked);
const providerForm = z.object({
  kind: text(20),
  slug: text(100),
  name: text(300),
  issuer: text(600),
  base_url: text(600),
  api_base_url: text(600),
  client_id: text(600),
  client_secret: text(2100),
  scopes: text(600),
  enabled: flag(),
  trust_email: flag(),
  allow_signup: flag(),
});
type ProviderForm = z.output<typeof providerForm>;

const asKind = (v: string): views.ProviderKind | undefined => views.PROVIDER_KINDS.find((k) => k === v);
const kindOf = (p: IdentityProvider): views.ProviderKind => (p.type === 'github' ? 'github' : 'oidc');

/** A new provider's form, prefilled from the preset it starts from. */
function newValues(kind: views.ProviderKind): views.ProviderValues {
  const preset = kind === 'oidc' ? undefined : PROVIDER_PRESETS[kind];
  const github = kind === 'github';
  return {
    kind,
    slug: kind === 'oidc' ? '' : kind,
    name: preset?.name ?? '',
    issuer: preset?.issuer ?? '',
    base_url: github ? GITHUB_DEFAULTS.baseUrl : '',
    api_base_url: github ? GITHUB_DEFAULTS.apiBaseUrl : '',
    client_id: '',
    scopes: preset?.scopes ?? OIDC_DEFAULT_SCOPES,
    enabled: true,
    trust_email: false,
    allow_signup: true,
  };
}

const valuesOf = (p: IdentityProvider): views.ProviderValues => ({
  ...p,
  kind: kindOf(p),
  issuer: p.issuer ?? '',
  base_url: p.base_url ?? '',
  api_base_url: p.api_base_url ?? '',
});

/** What was typed, shown again after a refusal: never the client secret (write-only). */
const formValues = ({ client_secret: _secret, ...f }: ProviderForm, kind: views.ProviderKind): views.ProviderValues => ({ ...f, kind });

const nonEmpty = (v: string) => (v.trim() === '' ? undefined : v);

/**
 * The fields both API bodies share, as the form sends them: an empty optional field is left to the API's default (a
 * GitHub form has no issuer field, an OpenID one no base URLs).
 */
function asBody(f: ProviderForm) {
  const body = {
    slug: f.slug,
    name: nonEmpty(f.name),
    issuer: nonEmpty(f.issuer),
    base_url: nonEmpty(f.base_url),
    api_base_url: nonEmpty(f.api_base_url),
    client_id: f.client_id,
    client_secret: nonEmpty(f.client_secret),
    scopes: nonEmpty(f.scopes),
    enabled: f.enabled,
    trust_email: f.trust_email,
    allow_signup: f.allow_signup,
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

const x = () => pageEnv().t.console.identityProviders;
const detail = (id: string) => `/admin/identity-providers/${id}`;

export function createConsoleIdentityProvidersRouter(deps: RouteDeps) {
  const callback = (slug: string) => callbackUrlOf(deps.ctx.config, slug);
  const form = (data: { provider?: IdentityProvider; values: views.ProviderValues; errors?: FieldErrors }) =>
    consolePage(
      views.renderProviderForm,
      { ...data, errors: data.errors ?? {}, callbackUrlOf: callback, callbackPattern: callback('SLUG').replace('SLUG', '{slug}') },
      data.provider?.name ?? x().addTitle,
    );
  const routes = consoleSection('identity-providers', deps.ctx, [
    consoleAction(api.list, { path: '/identity-providers', done: (r) => consolePage(views.renderProviders, r, x().title) }),
    consoleForm(api.create, {
      path: '/identity-providers/new',
      summary: 'Console: add an identity provider (choice of kind, then the form)',
      form: z.object({ kind: text(20) }),
      page: ({ form: f }) => {
        const kind = asKind(f.kind);
        return kind ? form({ values: newValues(kind) }) : consolePage(views.renderProviderKinds, undefined, x().addTitle);
      },
    }),
    consoleAction(api.create, {
      path: '/identity-providers',
      form: providerForm,
      input: (f) => ({ ...asBody(f), ...(f.kind === 'oidc' || !asKind(f.kind) ? { type: 'oidc' } : { preset: f.kind }) }),
      field: 'slug',
      invalid: ({ values, errors }) => form({ values: formValues(values, asKind(values.kind) ?? 'oidc'), errors }),
      done: (r) => redirect(detail(r.provider.id), x().added(r.provider.name)),
    }),
    consoleAction(api.get, {
      path: '/identity-providers/:providerId',
      done: ({ provider }) => form({ provider, values: valuesOf(provider) }),
    }),
    consoleAction(api.update, {
      path: '/identity-providers/:providerId',
      form: providerForm,
      input: asBody,
      field: 'slug',
      invalid: async ({ values, errors }, { call, params }) => {
        const { provider } = await call(api.get, { params });
        return form({ provider, values: formValues(values, kindOf(provider)), errors });
      },
      done: (_r, { params }) => redirect(detail(params.providerId), x().saved),
    }),
    consoleAction(api.remove, {
      path: '/identity-providers/:providerId/delete',
      confirm: async ({ call, params }) => ({
        title: x().deleteTitle((await call(api.get, { params })).provider.name),
        text: x().deleteText,
        button: x().delete,
      }),
      back: () => '/admin/identity-providers',
      done: () => redirect('/admin/identity-providers', x().deleted),
    }),
  ]);
  return declareRouter(deps, routes, { tags: ['Console'] });
}
