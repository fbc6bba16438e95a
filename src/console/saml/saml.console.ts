import { samlAppsApi as api } from '../../routes/saml/saml-apps.router';
import { asking, consoleAction, consoleListing, consolePage, consoleRouter, pageEnv, redirect, saying, type FieldErrors } from '../action';
import { appBody, placed, valuesOf } from './saml.form';
import * as views from './saml.view';

/**
 * Console pages of SAML applications (CONTRACT §19, §14), each built from its /api/admin/saml-apps endpoint: the list
 * with the IdP's values to copy, create (from the SP's metadata URL or XML, or by hand), edit, delete, the
 * IdP-initiated sign-in link, and the signing-key rotation.
 */
const x = () => pageEnv().t.console.saml;
const detail = (p: { appId: string }) => `/admin/saml-apps/${p.appId}`;
const form = (data: { app?: views.SamlApp; values?: views.SamlAppValues; errors?: FieldErrors }, status = 200) =>
  consolePage(
    views.renderSamlAppForm,
    { ...data, values: data.values ?? valuesOf(data.app), errors: data.errors ?? {} },
    data.app ? x().named(data.app.name) : x().create,
    status,
    data.errors,
  );

export const createConsoleSamlRouter = consoleRouter('saml', () => [
  ...consoleListing(api, '/saml-apps', {
    list: (r) => consolePage(views.renderSamlApps, r, x().title),
    form: () => form({}),
    create: {
      ...appBody,
      invalid: ({ values, errors, status }) => form({ values, errors: placed(errors, values) }, status),
      done: (r) => redirect(detail({ appId: r.app.id }), x().created(r.app.name)),
    },
  }),
  consoleAction(api.rotateKey, {
    path: '/saml-apps/rotate-key',
    confirm: () => ({ title: x().rotateTitle, text: x().rotateText, button: x().rotate }),
    back: () => '/admin/saml-apps',
    done: () => redirect('/admin/saml-apps', x().rotated),
  }),
  consoleAction(api.get, { path: '/saml-apps/:appId', done: (r) => form({ app: r.app }) }),
  consoleAction(api.update, {
    path: '/saml-apps/:appId',
    ...appBody,
    invalid: async ({ values, errors, status }, { call, params, inRequest }) => {
      const { app } = await call(api.get, { params });
      return inRequest(() => form({ app, values, errors: placed(errors, values) }, status));
    },
    done: (r, { params }) => redirect(detail(params), x().saved(r.app.name)),
  }),
  consoleAction(api.remove, {
    path: '/saml-apps/:appId/delete',
    confirm: asking(api.get, (r) => r.app.name, saying('delete', x)),
    back: () => '/admin/saml-apps',
    done: () => redirect('/admin/saml-apps', x().deleted),
  }),
]);
