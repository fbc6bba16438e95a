import { scimAdminApi as api } from '../../routes/scim/scim-admin.router';
import type { ScimConnection, ScimGroupRoles } from '../../wire/scim/scim-admin.schemas';
import { asking, consoleAction, consoleListing, consolePage, consoleRouter, pageEnv, redirect, saying } from '../action';
import type { Caller, FieldErrors } from '../action';
import { connectionBody, roleChoices, rolesBody } from './scim.form';
import * as views from './scim.view';

/**
 * Console pages of SCIM provisioning (docs/scim.md), each built from its /api/admin/scim-connections or
 * /api/admin/scim-groups endpoint (same guard, schemas, service call and audit event). A connection's token appears
 * only in the answer to the create or rotate post: never in a URL, a cookie, a redirect target or a later page.
 */

const x = () => pageEnv().t.console.scim;
const detail = (p: { connectionId: string }) => `/admin/scim/${p.connectionId}`;
const nameOf = (r: { connection: ScimConnection }) => r.connection.name;

export const createConsoleScimRouter = consoleRouter('scim', ({ ctx: app }) => {
  const scimUrl = `${app.config.baseUrl}/scim/v2`;
  const tokenPage = (r: { connection: ScimConnection; token: string }, heading: string, status: number) =>
    consolePage(views.renderConnectionToken, { ...r, heading, scimUrl }, heading, status);
  const groupPage = async (a: Caller, group: ScimGroupRoles, checked: readonly string[], errors: FieldErrors = {}) => {
    const title = x().groupNamed(group.display_name);
    return consolePage(views.renderGroupRoles, { group, roles: await roleChoices(a, group.role_ids), checked, errors }, title);
  };
  return [
    ...consoleListing(api, '/scim', {
      list: (r) => consolePage(views.renderConnections, { ...r, scimUrl }, x().title),
      form: () => consolePage(views.renderConnectionForm, { values: { name: '', description: '' }, errors: {} }, x().create),
      create: {
        ...connectionBody,
        invalid: ({ values, errors }) => consolePage(views.renderConnectionForm, { values, errors }, x().create),
        done: (r) => tokenPage(r, x().createdTitle, 201),
      },
    }),
    consoleAction(api.get, {
      path: '/scim/:connectionId',
      done: (r) => consolePage(views.renderConnection, { ...r, scimUrl }, x().connection(r.connection.name)),
    }),
    consoleAction(api.rotate, {
      path: '/scim/:connectionId/rotate',
      confirm: asking(api.get, nameOf, saying('rotate', x)),
      // A connection revoked in another tab: said on the list (never a token in a redirect).
      back: () => '/admin/scim',
      done: (r) => tokenPage(r, x().rotatedTitle, 200),
    }),
    consoleAction(api.remove, {
      path: '/scim/:connectionId/delete',
      confirm: asking(api.get, nameOf, saying('revoke', x)),
      back: detail,
      done: () => redirect('/admin/scim', x().revoked),
    }),
    consoleAction(api.groups, {
      path: '/scim-groups',
      done: async (r, a) => {
        const title = x().groupsTitle;
        const roles = await roleChoices(
          a,
          r.groups.flatMap((g) => g.role_ids),
        );
        return consolePage(views.renderGroups, { ...r, roles }, title);
      },
    }),
    consoleAction(api.groupRoles, { path: '/scim-groups/:groupId', done: (r, a) => groupPage(a, r.group, r.group.role_ids) }),
    consoleAction(api.setGroupRoles, {
      path: '/scim-groups/:groupId',
      ...rolesBody,
      invalid: async ({ values, errors }, a) => {
        const { group } = await a.call(api.groupRoles, { params: a.params });
        return a.inRequest(() => groupPage(a, group, values.role_ids, errors));
      },
      done: (_r, { params }) => redirect(`/admin/scim-groups/${params.groupId}`, x().rolesSaved),
    }),
  ];
});
