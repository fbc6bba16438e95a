import { z } from 'zod';
import { redirect } from '../../http/outcome';
import { checked } from '../../routes/console/console-kit';
import { text } from '../../routes/pages/page-kit';
import { declareRouter } from '../../routes/route';
import { samlAppsApi as api } from '../../routes/saml/saml-apps.router';
import type { RouteDeps } from '../../routes/types';
import { DEFAULT_SAML_ATTRIBUTES } from '../../services/saml/saml-policy';
import type { FieldErrors } from '../../views/console/components';
import { pageEnv } from '../../views/env';
import { consoleAction, consoleForm, consolePage, consoleSection } from '../action';
import * as views from './saml.view';

/**
 * Console pages of SAML applications (CONTRACT §19, §14), each built from its /api/admin/saml-apps endpoint (same
 * guard, same schema, same service call and audit events): the list with the IdP's values to copy, create (from the
 * SP's metadata URL or XML, or by hand), edit, delete, the IdP-initiated sign-in link, and the signing-key rotation.
 */

const flag = () => text(10).transform(checked);
const appForm = z.object({
  name: text(200),
  metadata_url: text(2100),
  metadata_xml: text(70_000),
  entity_id: text(1100),
  acs_urls: text(45_000),
  slo_url: text(2100),
  slo_binding: text(20),
  name_id_format: text(20),
  sp_certificate: text(20_000),
  sp_encryption_certificate: text(20_000),
  want_authn_requests_signed: flag(),
  sign_response: flag(),
  sign_assertion: flag(),
  encrypt_assertion: flag(),
  enabled: flag(),
  attr_email: text(600),
  attr_given_name: text(600),
  attr_family_name: text(600),
  attr_name: text(600),
  attr_roles: text(600),
});
type AppForm = z.output<typeof appForm>;

/**
 * ACS URLs, one a line: `URL` or `INDEX URL`; the first line is the default. A line without an index takes its line
 * number, so a plain list works and the indexes an SP's metadata gave survive an edit.
 */
const parseAcs = (lines: string) =>
  lines
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line, i) => {
      const m = /^(\d{1,5})\s+(\S.*)$/.exec(line);
      return { url: m ? m[2]! : line, index: m ? Number(m[1]) : i, default: i === 0 };
    });

const formatAcs = (app: views.SamlApp) =>
  [...app.acs_urls]
    .sort((a, b) => Number(b.default) - Number(a.default))
    .map((a) => `${a.index} ${a.url}`)
    .join('\n');

/** The form as the API body: from the metadata when a URL or XML is given (the fields it sets are then not sent). */
function asBody(f: AppForm) {
  const common = {
    name: f.name,
    name_id_format: f.name_id_format || undefined,
    attributes: {
      email: f.attr_email,
      given_name: f.attr_given_name,
      family_name: f.attr_family_name,
      name: f.attr_name,
      roles: f.attr_roles,
    },
    sign_response: f.sign_response,
    sign_assertion: f.sign_assertion,
    encrypt_assertion: f.encrypt_assertion,
    enabled: f.enabled,
  };
  if (f.metadata_url.trim()) return { ...common, metadata_url: f.metadata_url };
  if (f.metadata_xml.trim()) return { ...common, metadata_xml: f.metadata_xml };
  return {
    ...common,
    entity_id: f.entity_id,
    acs_urls: parseAcs(f.acs_urls),
    slo_url: f.slo_url.trim() || null,
    slo_binding: f.slo_binding || undefined,
    sp_certificate: f.sp_certificate.trim() || null,
    sp_encryption_certificate: f.sp_encryption_certificate.trim() || null,
    want_authn_requests_signed: f.want_authn_requests_signed,
  };
}

const valuesOf = (a?: views.SamlApp): views.SamlAppValues => ({
  name: a?.name ?? '',
  metadata_url: '',
  metadata_xml: '',
  entity_id: a?.entity_id ?? '',
  acs_urls: a ? formatAcs(a) : '',
  slo_url: a?.slo_url ?? '',
  slo_binding: a?.slo_binding ?? 'HTTP-Redirect',
  name_id_format: a?.name_id_format ?? '',
  sp_certificate: a?.sp_certificate ?? '',
  sp_encryption_certificate: a?.sp_encryption_certificate ?? '',
  want_authn_requests_signed: a?.want_authn_requests_signed ?? false,
  sign_response: a?.sign_response ?? true,
  sign_assertion: a?.sign_assertion ?? true,
  encrypt_assertion: a?.encrypt_assertion ?? false,
  enabled: a?.enabled ?? true,
  attr_email: a?.attributes.email ?? DEFAULT_SAML_ATTRIBUTES.email,
  attr_given_name: a?.attributes.given_name ?? DEFAULT_SAML_ATTRIBUTES.given_name,
  attr_family_name: a?.attributes.family_name ?? DEFAULT_SAML_ATTRIBUTES.family_name,
  attr_name: a?.attributes.name ?? DEFAULT_SAML_ATTRIBUTES.name,
  attr_roles: a?.attributes.roles ?? DEFAULT_SAML_ATTRIBUTES.roles,
});

/** The API names `attributes` (and `name_id_format`'s select has no text field): said beside the field it is about. */
function placed(errors: FieldErrors, f: AppForm): FieldErrors {
  const out: FieldErrors = { ...errors };
  if (out.attributes) {
    const body = asBody(f).attributes;
    const empty = (Object.keys(body) as Array<keyof typeof body>).find((k) => !body[k].trim()) ?? 'email';
    out[`attr_${empty}`] = out.attributes;
    delete out.attributes;
  }
  return out;
}

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

export function createConsoleSamlRouter(deps: RouteDeps) {
  const routes = consoleSection('saml', deps.ctx, [
    consoleAction(api.list, { path: '/saml-apps', done: (r) => consolePage(views.renderSamlApps, r, x().title) }),
    consoleForm(api.create, { path: '/saml-apps/new', page: () => form({}) }),
    consoleAction(api.create, {
      path: '/saml-apps',
      form: appForm,
      input: asBody,
      field: 'name',
      invalid: ({ values, errors, status }) => form({ values, errors: placed(errors, values) }, status),
      done: (r) => redirect(detail({ appId: r.app.id }), x().created(r.app.name)),
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
      form: appForm,
      input: asBody,
      field: 'name',
      invalid: async ({ values, errors, status }, { call, params }) =>
        form({ app: (await call(api.get, { params })).app, values, errors: placed(errors, values) }, status),
      done: (r, { params }) => redirect(detail(params), x().saved(r.app.name)),
    }),
    consoleAction(api.remove, {
      path: '/saml-apps/:appId/delete',
      confirm: async ({ call, params }) => ({
        title: x().deleteTitle((await call(api.get, { params })).app.name),
        text: x().deleteText,
        button: x().delete,
      }),
      back: () => '/admin/saml-apps',
      done: () => redirect('/admin/saml-apps', x().deleted),
    }),
  ]);
  return declareRouter(deps, routes, { tags: ['Console'] });
}
