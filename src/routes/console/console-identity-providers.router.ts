import type { Request, Response } from 'express';
import { z } from 'zod';
import type { IdentityProviderRow } from '../../db/repositories/identity-providers.repo';
import * as providers from '../../services/federation/providers.service';
import { callbackUrlOf, GITHUB_DEFAULTS, OIDC_DEFAULT_SCOPES } from '../../services/federation/relying-party';
import type { Principal } from '../../services/principal';
import * as views from '../../views/console/identity-providers';
import { renderConfirm } from '../../views/console/pages';
import { createProviderBody, providerIdParams, updateProviderBody } from '../federation/identity-providers.schemas';
import { html, text } from '../pages/page-kit';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { pageEnv } from '../../views/env';
import { act, checked, CONSOLE, confirmBody, frameOf, refuseConsoleForm, setFlash, submitForm } from './console-kit';
import type { FieldErrors } from '../../views/console/components';

const PERMISSION = 'system:manage_identity_providers';

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
  enabled: text(10),
  trust_email: text(10),
  allow_signup: text(10),
});
type ProviderForm = z.output<typeof providerForm>;

const kindQuery = z.object({ kind: text(20) });
const asKind = (v: string): views.ProviderKind | undefined => views.PROVIDER_KINDS.find((k) => k === v);

/** A new provider's form, prefilled from the preset it starts from. */
function newValues(kind: views.ProviderKind): views.ProviderValues {
  const preset = kind === 'oidc' ? undefined : providers.PROVIDER_PRESETS[kind];
  return {
    kind,
    slug: kind === 'oidc' ? '' : kind,
    name: preset?.name ?? '',
    issuer: preset?.issuer ?? '',
    base_url: kind === 'github' ? GITHUB_DEFAULTS.baseUrl : '',
    api_base_url: kind === 'github' ? GITHUB_DEFAULTS.apiBaseUrl : '',
    client_id: '',
    scopes: preset?.scopes ?? OIDC_DEFAULT_SCOPES,
    enabled: true,
    trust_email: false,
    allow_signup: true,
  };
}

function valuesOf(p: IdentityProviderRow): views.ProviderValues {
  return {
    kind: p.type === 'github' ? 'github' : 'oidc',
    slug: p.slug,
    name: p.name,
    issuer: p.issuer ?? '',
    base_url: p.baseUrl ?? '',
    api_base_url: p.apiBaseUrl ?? '',
    client_id: p.clientId,
    scopes: p.scopes,
    enabled: p.enabled,
    trust_email: p.trustEmail,
    allow_signup: p.allowSignup,
  };
}

/** What was typed, shown again after a refusal: never the client secret (write-only). */
const formValues = (f: ProviderForm, kind: views.ProviderKind): views.ProviderValues => ({
  kind,
  slug: f.slug,
  name: f.name,
  issuer: f.issuer,
  base_url: f.base_url,
  api_base_url: f.api_base_url,
  client_id: f.client_id,
  scopes: f.scopes,
  enabled: checked(f.enabled),
  trust_email: checked(f.trust_email),
  allow_signup: checked(f.allow_signup),
});

const nonEmpty = (v: string) => (v.trim() === '' ? undefined : v);

/** The fields both API bodies share, as the form sends them (an empty optional field is left to the API's default). */
function commonBody(f: ProviderForm, github: boolean) {
  return {
    slug: f.slug,
    name: nonEmpty(f.name),
    ...(github ? { base_url: nonEmpty(f.base_url), api_base_url: nonEmpty(f.api_base_url) } : { issuer: nonEmpty(f.issuer) }),
    client_id: f.client_id,
    client_secret: nonEmpty(f.client_secret),
    scopes: nonEmpty(f.scopes),
    enabled: checked(f.enabled),
    trust_email: checked(f.trust_email),
    allow_signup: checked(f.allow_signup),
  };
}

const dropUndefined = <T extends Record<string, unknown>>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/**
 * Console pages of identity providers (CONTRACT §16, §14) over services/federation/providers.service.ts, the service of
 * /api/admin/identity-providers (permission system:manage_identity_providers, the same audit events). The client secret is
 * write-only: the form never shows it, not even after a refused post.
 */

/** The texts of these pages in the request's language (CONTRACT §15). */
const x = () => pageEnv().t.console.identityProviders;

export function createConsoleIdentityProvidersRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const { config } = ctx;
  const post = { ...CONSOLE, method: 'post', csrf: refuseConsoleForm, form: true } as const;
  const page = (req: Request, res: Response, principal: Principal, title: string) =>
    frameOf(req, res, config, principal, 'identity-providers', title);
  const callback = (slug: string) => callbackUrlOf(config, slug);
  const form = (
    req: Request,
    res: Response,
    principal: Principal,
    status: number,
    data: { provider?: IdentityProviderRow; values: views.ProviderValues; errors: FieldErrors },
  ) =>
    html(
      res,
      status,
      views.renderProviderForm(page(req, res, principal, data.provider?.name ?? x().addTitle), {
        ...data,
        callbackUrlOf: callback,
        callbackPattern: callback('SLUG').replace('SLUG', '{slug}'),
      }),
    );
  const detail = (id: string) => `/admin/identity-providers/${id}`;

  return declareRouter(
    deps,
    [
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/identity-providers',
          summary: 'Console: identity providers',
          permission: PERMISSION,
          twin: 'GET /api/admin/identity-providers',
        },
        async ({ principal }, req, res) =>
          html(res, 200, views.renderProviders(page(req, res, principal, x().title), { providers: await providers.listProviders(ctx) })),
      ),
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/identity-providers/new',
          summary: 'Console: add an identity provider (choice of kind, then the form)',
          permission: PERMISSION,
          twin: 'POST /api/admin/identity-providers',
          query: kindQuery,
        },
        ({ query, principal }, req, res) => {
          const kind = asKind(query.kind);
          if (!kind) return html(res, 200, views.renderProviderKinds(page(req, res, principal, x().addTitle)));
          form(req, res, principal, 200, { values: newValues(kind), errors: {} });
        },
      ),
      route(
        {
          ...post,
          path: '/identity-providers',
          summary: 'Console: add an identity provider',
          permission: PERMISSION,
          twin: 'POST /api/admin/identity-providers',
          body: providerForm,
        },
        async ({ body, principal }, req, res) => {
          const kind = asKind(body.kind) ?? 'oidc';
          const source = kind === 'oidc' ? { type: 'oidc' } : { preset: kind };
          const input = dropUndefined({ ...commonBody(body, kind === 'github'), ...source });
          const again = (errors: FieldErrors, status: number) =>
            form(req, res, principal, status, { values: formValues(body, kind), errors });
          const created = await submitForm(createProviderBody, input, again, 'slug', (data) => providers.createProvider(ctx, data));
          if (!created) return;
          setFlash(res, config, 'ok', x().added(created.name));
          res.redirect(303, detail(created.id));
        },
      ),
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/identity-providers/:providerId',
          summary: 'Console: an identity provider',
          permission: PERMISSION,
          twin: 'GET /api/admin/identity-providers/:providerId',
          params: providerIdParams,
        },
        async ({ params, principal }, req, res) => {
          const provider = await providers.getProvider(ctx, params.providerId);
          form(req, res, principal, 200, { provider, values: valuesOf(provider), errors: {} });
        },
      ),
      route(
        {
          ...post,
          path: '/identity-providers/:providerId',
          summary: 'Console: edit an identity provider',
          permission: PERMISSION,
          twin: 'PUT /api/admin/identity-providers/:providerId',
          params: providerIdParams,
          body: providerForm,
        },
        async ({ params, body, principal }, req, res) => {
          const provider = await providers.getProvider(ctx, params.providerId);
          const kind = provider.type === 'github' ? 'github' : 'oidc';
          const again = (errors: FieldErrors, status: number) =>
            form(req, res, principal, status, { provider, values: formValues(body, kind), errors });
          const input = dropUndefined(commonBody(body, kind === 'github'));
          const saved = await submitForm(updateProviderBody, input, again, 'slug', (data) =>
            providers.updateProvider(ctx, params.providerId, data),
          );
          if (!saved) return;
          setFlash(res, config, 'ok', x().saved);
          res.redirect(303, detail(params.providerId));
        },
      ),
      route(
        {
          ...post,
          path: '/identity-providers/:providerId/delete',
          summary: 'Console: delete an identity provider',
          permission: PERMISSION,
          twin: 'DELETE /api/admin/identity-providers/:providerId',
          params: providerIdParams,
          body: confirmBody,
        },
        async ({ params, body, principal }, req, res) => {
          if (body.confirm !== 'yes') {
            const provider = await providers.getProvider(ctx, params.providerId);
            return html(
              res,
              200,
              renderConfirm(page(req, res, principal, x().deleteTitle(provider.name)), {
                message: x().deleteText,
                action: `${detail(provider.id)}/delete`,
                button: x().delete,
                cancel: detail(provider.id),
              }),
            );
          }
          await act(config, res, '/admin/identity-providers', async () => {
            await providers.deleteProvider(ctx, params.providerId);
            return x().deleted;
          });
        },
      ),
    ],
    { tags: ['Console'] },
  );
}
