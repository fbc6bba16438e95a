import { UUID_PATTERN } from '../../lib/ids';
import { rolesApi } from '../../routes/rbac/roles.routes';
import { usersApi as api } from '../../routes/users/users.router';
import { listUsersQuery } from '../../wire/users/users.schemas';
import * as views from '../../views/console/pages';
import { asking, consoleAction, consoleForm, consolePage, consoleRouter, pageEnv, Redirect, redirect, saying } from '../action';
import type { Caller, FieldErrors } from '../action';
import { changes, inviteForm, listFilterOf, listQuery, profileForm, roleForm, usersQuery } from './users.form';

/**
 * The console's user pages and actions (CONTRACT §14), each built from its /api/users endpoint: the same guard, schema,
 * service call and audit event. The list is GET /api/users by keyset (paging=cursor) with GET /api/users/count; a
 * user's page is GET /api/users/:userId with its sessions, mfa, apps, activity and identities, as the API answers them.
 */
const c = () => pageEnv().t.console;
const userSays = () => c().user;
const user = (p: { userId: string }) => `/admin/users/${p.userId}`;
const emailOf = (r: { user: { email: string } }) => r.user.email;
/** The user's latest events on the page; the audit log shows the rest. */
const EVENTS_SHOWN = 10;

/** The user's page; a refused form of it is shown again with its errors beside the fields and the values entered. */
async function detailPage(
  { principal, call, allows, params }: Caller & { params: { userId: string } },
  refused?: { errors: FieldErrors; values: Record<string, string>; status: number },
) {
  const { errors = {}, values, status = 200 } = refused ?? {};
  const [{ user: u }, roles, { sessions }, { apps }, factors, { events }, { identities }] = await Promise.all([
    call(api.get, { params }),
    // The choices of "Role to assign", for whoever may assign roles (users:manage_roles).
    allows(rolesApi.assignable) ? call(rolesApi.assignable, {}).then((r) => r.roles) : Promise.resolve([]),
    call(api.sessions, { params }),
    call(api.apps, { params }),
    call(api.factors, { params }),
    call(api.activity, { params, query: { limit: EVENTS_SHOWN } }),
    call(api.identities, { params }),
  ]);
  const data = { user: u, allRoles: roles, sessions, apps, factors, events, identities, errors, values, isSelf: u.id === principal.userId };
  return consolePage(views.renderUserDetail, data, u.email, status, errors);
}

export const createConsoleUsersRouter = consoleRouter('users', () => [
  consoleAction(api.list, {
    path: '/users',
    summary: 'Console: users',
    form: usersQuery,
    input: listQuery,
    done: async (r, { form: q, call }) => {
      const title = c().users.title;
      const { shown, link } = listFilterOf(q);
      const { count } = await call(api.count, { query: listUsersQuery.parse(listQuery(q)) });
      const prev = r.prev_cursor ? link({ before: r.prev_cursor }) : undefined;
      const next = r.next_cursor ? link({ cursor: r.next_cursor }) : undefined;
      return consolePage(views.renderUsers, { users: r.users, count, filter: shown, prev, next }, title);
    },
  }),
  consoleForm(api.invite, {
    path: '/users/new',
    summary: 'Console: invite a user (form)',
    page: () => consolePage(views.renderInviteUser, { values: {}, errors: {} }, c().users.invite),
  }),
  consoleAction(api.invite, {
    path: '/users',
    summary: 'Console: invite a user',
    form: inviteForm,
    input: (f) => f,
    field: 'email',
    invalid: ({ values, errors }) => consolePage(views.renderInviteUser, { values, errors }, c().users.invite),
    done: (r) => redirect(user({ userId: r.user.id }), c().users.invited(r.user.email)),
  }),
  consoleForm(api.get, {
    path: '/users/:userId',
    summary: 'Console: a user',
    page: (a) => detailPage(a),
  }),
  consoleAction(api.update, {
    path: '/users/:userId/profile',
    summary: 'Console: edit a user',
    form: profileForm,
    // Only what changed is sent, so that an unchanged email never needs the §8 take-over rights.
    before: async ({ form: f, call, params }) => {
      const nothingChanged = c().common.nothingChanged;
      return Object.keys(changes(f, (await call(api.get, { params })).user)).length ? undefined : redirect(user(params), nothingChanged);
    },
    input: async (f, { call, params }) => changes(f, (await call(api.get, { params })).user),
    field: 'email',
    invalid: (refused, a) => detailPage(a, refused),
    done: (_r, { params }) => redirect(user(params), c().user.profileSaved),
  }),
  // CONTRACT §8: re-activation needs users:delete, like deactivation (the API's PUT checks it in the service).
  consoleAction(api.update, {
    path: '/users/:userId/activate',
    summary: 'Console: re-activate a user',
    input: () => ({ is_active: true }),
    back: user,
    done: (_r, { params }) => redirect(user(params), c().user.reactivated),
  }),
  consoleAction(api.deactivate, {
    path: '/users/:userId/deactivate',
    confirm: asking(api.get, emailOf, saying('deactivate', userSays)),
    back: user,
    done: (_r, { params }) => redirect(user(params), c().user.deactivated),
  }),
  consoleAction(rolesApi.assignToUser, {
    path: '/users/:userId/roles',
    summary: 'Console: assign a role',
    form: roleForm,
    // Nothing chosen: said as the flash of the user's page (the field is required in the browser).
    before: async ({ form: f, params }) =>
      UUID_PATTERN.test(f.role_id) ? undefined : new Redirect(user(params), { kind: 'error', message: c().errors.chooseRole }),
    input: (f) => ({ role_id: f.role_id }),
    field: 'role_id',
    invalid: (refused, a) => detailPage(a, refused),
    done: async (r, { call, params, form: f }) => {
      const says = c().user;
      const { role } = await call(rolesApi.get, { params: { roleId: f.role_id } });
      return redirect(user(params), r.status === 201 ? says.roleAssigned(role.name) : says.roleAlreadyHeld(role.name));
    },
  }),
  consoleAction(rolesApi.removeFromUser, {
    path: '/users/:userId/roles/:roleId/remove',
    summary: 'Console: remove a role',
    confirm: async ({ call, params }) => {
      const says = c().user;
      const [{ user: u }, { role }] = await Promise.all([call(api.get, { params }), call(rolesApi.get, { params })]);
      return { title: says.removeRoleTitle(role.name, u.email), text: says.removeRoleText, button: says.removeRoleButton };
    },
    back: user,
    done: (_r, { params }) => redirect(user(params), c().user.roleRemoved),
  }),
  consoleAction(api.resetFactors, {
    path: '/users/:userId/mfa/reset',
    confirm: asking(api.get, emailOf, () => {
      const says = c().user;
      return (email) => ({ title: says.resetTitle(email), text: says.resetText, button: says.resetFactors });
    }),
    back: user,
    done: (_r, { params }) => redirect(user(params), c().user.factorsReset),
  }),
  consoleAction(api.revokeSession, {
    path: '/users/:userId/sessions/:sessionId/revoke',
    confirm: () => ({ title: c().user.revokeTitle, text: c().user.revokeText, button: c().user.revokeSessionButton }),
    back: user,
    done: (_r, { params }) => redirect(user(params), c().user.sessionRevoked),
  }),
  consoleAction(api.resendInvitation, {
    path: '/users/:userId/invitation',
    back: user,
    done: (r, { params }) => redirect(user(params), c().user.invitationResent(r.user.email)),
  }),
  consoleAction(api.passwordLink, {
    path: '/users/:userId/password-link',
    back: user,
    done: (_r, { params }) => redirect(user(params), c().user.linkSent),
  }),
]);
