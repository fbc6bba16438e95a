import { z } from 'zod';
import { identityProvidersApi as api } from '../../routes/federation/identity-providers.router';
import type { IdentityProvider } from '../../wire/federation/identity-providers.schemas';
import { callbackUrlOf } from '../../declarations/identity-providers';
import * as views from '../../views/console/identity-providers';
import { asking, consoleAction, consoleForm, consolePage, consoleRouter, pageEnv, redirect, saying, text } from '../action';
import type { FieldErrors } from '../action';
import { asKind, createBody, formValues, kindOf, newValues, updateBody, valuesOf } from './identity-providers.form';

/**
 * Console pages of identity providers (CONTRACT §16, §14), each built from its /api/admin/identity-providers endpoint
 * (permission system:manage_identity_providers, the same audit events).
 */
const x = () => pageEnv().t.console.identityProviders;
const detail = (id: string) => `/admin/identity-providers/${id}`;

export const createConsoleIdentityProvidersRouter = consoleRouter('identity-providers', (deps) => {
  const callback = (slug: string) => callbackUrlOf(deps.ctx.config, slug);
  const form = (data: { provider?: IdentityProvider; values: views.ProviderValues; errors?: FieldErrors }) =>
    consolePage(
      views.renderProviderForm,
      { ...data, errors: data.errors ?? {}, callbackUrlOf: callback, callbackPattern: callback('SLUG').replace('SLUG', '{slug}') },
      data.provider?.name ?? x().addTitle,
    );
  return [
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
      ...createBody,
      invalid: ({ values, errors }) => form({ values: formValues(values, asKind(values.kind) ?? 'oidc'), errors }),
      done: (r) => redirect(detail(r.provider.id), x().added(r.provider.name)),
    }),
    consoleAction(api.get, {
      path: '/identity-providers/:providerId',
      done: ({ provider }) => form({ provider, values: valuesOf(provider) }),
    }),
    consoleAction(api.update, {
      path: '/identity-providers/:providerId',
      ...updateBody,
      invalid: async ({ values, errors }, { call, params, inRequest }) => {
        const { provider } = await call(api.get, { params });
        return inRequest(() => form({ provider, values: formValues(values, kindOf(provider)), errors }));
      },
      done: (_r, { params }) => redirect(detail(params.providerId), x().saved),
    }),
    consoleAction(api.remove, {
      path: '/identity-providers/:providerId/delete',
      confirm: asking(api.get, (r) => r.provider.name, saying('delete', x)),
      back: () => '/admin/identity-providers',
      done: () => redirect('/admin/identity-providers', x().deleted),
    }),
  ];
});
