import { z } from 'zod';
import { SUPPORTED_SCOPES } from '../../declarations/client-policy';
import type { ClientPreset } from '../../declarations/client-presets';
import { clientsApi as api, resourcesApi } from '../../routes/admin/admin.router';
import type { BackchannelDelivery, OAuthClient } from '../../wire/admin/admin.schemas';
import * as views from '../../views/console/pages';
import { presetName, renderPresetChooser, renderQuickStart, type QuickStartData } from '../../views/console/quick-start';
import { asking, consoleAction, consoleForm, consolePage, consoleRouter, pageEnv, Redirect, redirect, saying, text } from '../action';
import type { Caller, FieldErrors } from '../action';
import { createBody, presetParam, presetValues, updateBody, valuesOf } from './applications.form';

/**
 * Console pages of applications (CONTRACT §12, §14), each built from its /api/admin/oauth-clients endpoint. A secret
 * appears only in the answer to the create or rotate post.
 */
const x = () => pageEnv().t.console.applications;
const st = () => pageEnv().t.console.start;
const detail = (clientId: string) => `/admin/applications/${encodeURIComponent(clientId)}`;
const nameOf = (r: { client: OAuthClient }) => r.client.name;

const form = async (
  { call, allows }: Caller,
  data: {
    client?: OAuthClient;
    values?: views.ApplicationValues;
    errors?: FieldErrors;
    preset?: ClientPreset | 'custom';
    /** The application's page: its recent back-channel logout deliveries (GET …/backchannel-logout-deliveries). */
    deliveries?: BackchannelDelivery[];
  },
) => {
  const preset = data.preset && data.preset !== 'custom' ? data.preset : undefined;
  const may = data.client
    ? { write: allows(api.update), rotate: allows(api.rotateSecret), delete: allows(api.deactivate) }
    : { write: true, rotate: false, delete: false };
  const values = data.values ?? (preset ? presetValues(preset) : valuesOf(data.client));
  const title = data.client?.name ?? (preset ? st().formTitle(presetName(preset)) : x().create);
  const { resources } = await call(resourcesApi.list, {});
  return consolePage(
    views.renderApplicationForm,
    { ...data, values, errors: data.errors ?? {}, scopes: SUPPORTED_SCOPES, resources, may },
    title,
  );
};

export const createConsoleApplicationsRouter = consoleRouter('applications', (deps) => {
  /** The quick-start of an application (with its secret in the answer to the create or rotate post only). */
  const quickStartOf = async ({ call }: Caller, client: OAuthClient, secret?: string): Promise<QuickStartData> => {
    const { resources } = await call(resourcesApi.list, {});
    return { client, resources, issuer: deps.ctx.config.oidcIssuer, secret };
  };
  const secretOnce = async (a: Caller, r: { client: OAuthClient; client_secret?: string }, heading: string, title: string, status = 200) =>
    consolePage(views.renderSecretOnce, { heading, ...(await quickStartOf(a, r.client, r.client_secret)) }, title, status);
  return [
    consoleAction(api.list, {
      path: '/applications',
      done: (r, { allows }) => consolePage(views.renderApplications, { ...r, canWrite: allows(api.create) }, x().title),
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
      ...createBody,
      invalid: ({ values, errors }, a) =>
        form(a, { values: { ...values, type: values.type || 'confidential' }, errors, preset: presetParam(values.preset) ?? 'custom' }),
      // The secret is shown in this answer only (no-store, not a redirect target, never in a URL or cookie).
      done: (r, a) => secretOnce(a, r, x().createdHeading(r.client.name), x().createdTitle, 201),
    }),
    // The application's page: its form, and its recent back-channel logout deliveries from their own endpoint.
    consoleAction(api.get, {
      path: '/applications/:clientId',
      done: async ({ client }, a) => {
        const { deliveries } = await a.call(api.backchannelDeliveries, { params: a.params });
        return a.inRequest(() => form(a, { client, deliveries }));
      },
    }),
    consoleAction(api.get, {
      path: '/applications/:clientId/quick-start',
      summary: 'Console: the quick-start of an application',
      done: async ({ client }, a) => {
        const title = st().quickStartTitle(client.name);
        return consolePage(renderQuickStart, await quickStartOf(a, client), title);
      },
    }),
    consoleAction(api.update, {
      path: '/applications/:clientId',
      ...updateBody,
      invalid: async ({ values, errors }, a) => {
        const { client } = await a.call(api.get, { params: a.params });
        return a.inRequest(() => form(a, { client, values: { ...values, type: client.type }, errors }));
      },
      done: (_r, { params }) => redirect(detail(params.clientId), x().saved),
    }),
    consoleAction(api.rotateSecret, {
      path: '/applications/:clientId/rotate',
      confirm: asking(api.get, nameOf, saying('rotate', x)),
      before: async ({ call, params }) => {
        const says = x();
        const { client } = await call(api.get, { params });
        const refused = !client.is_active
          ? says.rotateDeactivated
          : client.type === 'public'
            ? says.publicNoRotate
            : client.token_endpoint_auth_method === 'private_key_jwt'
              ? says.keysNoRotate
              : undefined;
        return refused ? new Redirect(detail(params.clientId), { kind: 'error', message: refused }) : undefined;
      },
      back: (p) => detail(p.clientId),
      done: async (r, a) => {
        const says = x();
        const { client } = await a.call(api.get, { params: a.params });
        return secretOnce(a, { client, client_secret: r.client_secret }, says.rotatedHeading(client.name), says.rotatedTitle);
      },
    }),
    consoleAction(api.deactivate, {
      path: '/applications/:clientId/deactivate',
      confirm: asking(api.get, nameOf, saying('deactivate', x)),
      back: (p) => detail(p.clientId),
      done: (_r, { params }) => redirect(detail(params.clientId), x().deactivated),
    }),
  ];
});
