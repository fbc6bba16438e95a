import { resetUserFactors } from '../../services/mfa/factor-reset.service';
import { z } from 'zod';
import * as userAdmin from '../../services/user-admin.service';
import * as users from '../../services/users.service';
import { sessionsBody } from '../../wire/auth/account.schemas';
import { presentSession } from '../auth/account.router';
import { presentPasskey } from '../auth/mfa.router';
import { mfaStatusBody } from '../../wire/auth/mfa.schemas';
import { successBody, uuidField } from '../../wire/common.schemas';
import { listRoles } from '../../services/role-catalogue.service';
import { presentRole } from '../rbac/rbac.presenters';
import { rolesBody, userIdParams } from '../../wire/rbac/rbac.schemas';
import { createRoleRoutes, rolesApi } from '../rbac/roles.routes';
import { declareRouter, endpointsWith, removed, route, served } from '../route';
import type { RouteDeps } from '../types';
import * as audit from '../../services/audit.service';
import { ADMIN_TIER } from '../../services/principal';
import { presentAuditEvent, presentPage } from '../audit/audit.presenters';
import { activityQuery } from '../../wire/audit/audit.schemas';
import { presentApp } from '../auth/apps.router';
import { presentIdentity } from '../federation/federation.presenters';
import { identitiesBody } from '../../wire/federation/identity-providers.schemas';
import { presentUserDetail, presentUserSummary } from './users.presenters';
import {
  inviteUserBody,
  listUsersQuery,
  updateUserBody,
  userActivityBody,
  userAppsBody,
  userDetailEnvelope,
  usersCountBody,
  usersPageBody,
} from '../../wire/users/users.schemas';

const READ = { auth: 'user', permission: 'users:read' } as const;
const WRITE = { auth: 'user', permission: 'users:write' } as const;
const readUsers = endpointsWith(READ);
const readUser = endpointsWith({ ...READ, params: userIdParams });
/** The reads of a user's console page (never cached; an unknown user is 404). */
const userPage = endpointsWith({ ...READ, params: userIdParams, noStore: true });
const writeUser = endpointsWith({ ...WRITE, params: userIdParams });
const userSessionParams = z.object({ userId: uuidField('userId'), sessionId: uuidField('sessionId') });
const one = { description: '{ user }', schema: userDetailEnvelope };

/** The routes of users that the console's user pages are built from (src/console/users/users.console.ts). */
export const usersApi = {
  list: readUsers.get(
    '/',
    {
      summary: 'List users, newest first: by page number (search, page, limit <= 100) or by keyset cursor (paging=cursor)',
      description:
        'Filters: search (email or name), status (active | inactive), tier=admin. By page (the default) the answer carries ' +
        'the exact total; by cursor (paging=cursor, or cursor / before given) page 2,000 costs what page 1 costs and ' +
        'nothing is counted: page and total are null, and GET /api/users/count answers how many match. Both answer ' +
        'next_cursor and prev_cursor.',
      query: listUsersQuery,
      response: { description: '{ users, total, page, limit, next_cursor, prev_cursor }', schema: usersPageBody },
    },
    async ({ query }, ctx) => {
      const filter = filterOf(query);
      if (query.paging === 'cursor' || query.cursor !== undefined || query.before !== undefined) {
        const found = await userAdmin.findUsers(ctx, { ...filter, cursor: query.cursor, before: query.before, limit: query.limit });
        return {
          users: found.users.map((u) => presentUserSummary(u.user, u.roles)),
          total: null,
          page: null,
          limit: query.limit,
          next_cursor: found.nextCursor,
          prev_cursor: found.prevCursor,
        };
      }
      const { users: rows, total } = await users.listUsers(ctx, { ...filter, page: query.page, limit: query.limit });
      const more = rows.length > 0 && query.page * query.limit < total;
      return {
        users: rows.map((u) => presentUserSummary(u.user, u.roles)),
        total,
        page: query.page,
        limit: query.limit,
        next_cursor: more ? rows[rows.length - 1].user.id : null,
        prev_cursor: query.page > 1 && rows.length > 0 ? rows[0].user.id : null,
      };
    },
  ),
  count: readUsers.get(
    '/count',
    {
      summary: 'How many users the filter of GET /api/users matches (page, limit and cursors ignored)',
      description:
        'The same query as the list: search, status, tier. `count.kind` is `exact`, `more-than` (a filtered count stops ' +
        'at 10,000) or `about` (the estimate of an unfiltered table beyond that).',
      query: listUsersQuery,
      noStore: true,
      response: { description: '{ count: { kind, value } }', schema: usersCountBody },
    },
    async ({ query }, ctx) => ({ count: await userAdmin.countFoundUsers(ctx, filterOf(query)) }),
  ),
  sessions: userPage.get(
    '/:userId/sessions',
    { summary: "A user's live sessions", response: { description: '{ sessions: [...] } (current is always false)', schema: sessionsBody } },
    async ({ params }, ctx) => ({ sessions: (await userAdmin.listSessionsOfUser(ctx, params.userId)).map((s) => presentSession(s, '')) }),
  ),
  factors: userPage.get(
    '/:userId/mfa',
    {
      summary: "A user's second factors (never their secrets)",
      response: { description: '{ totp, passkeys, recovery_codes_left }', schema: mfaStatusBody },
    },
    async ({ params }, ctx) => {
      const factors = await userAdmin.listFactorsOfUser(ctx, params.userId);
      return { totp: factors.totp, passkeys: factors.passkeys.map(presentPasskey), recovery_codes_left: factors.recoveryCodesLeft };
    },
  ),
  apps: userPage.get(
    '/:userId/apps',
    {
      summary: 'The applications a user approved (their grants), as the account page lists them',
      response: { description: '{ apps: [{ client_id, name, scopes, granted_at, last_used_at }] }', schema: userAppsBody },
    },
    async ({ params }, ctx) => ({ apps: (await userAdmin.listAppsOfUser(ctx, params.userId)).map(presentApp) }),
  ),
  activity: userPage.get(
    '/:userId/activity',
    {
      summary: 'The security events about a user (as actor or subject), newest first, people and applications by name',
      description:
        'Each event as GET /api/admin/audit-events presents it (actor and subject with email and name, the application ' +
        'with its current name); next_cursor pages on. The whole trail stays behind system:manage_users.',
      query: activityQuery,
      response: { description: '{ events, next_cursor }', schema: userActivityBody },
    },
    async ({ params, query }, ctx) => {
      await userAdmin.assertUserExists(ctx, params.userId);
      const page = await audit.listOwnActivity(ctx, params.userId, { cursor: query.cursor, limit: query.limit });
      const names = await audit.clientNamesOf(ctx, page.events);
      return presentPage(page, (e) => presentAuditEvent(e, names));
    },
  ),
  update: writeUser.put(
    '/:userId',
    { summary: 'Update a user', body: updateUserBody, response: one, errors: [409] },
    async ({ principal, params, body }, ctx) => ({ user: presentUserDetail(await users.updateUser(ctx, principal, params.userId, body)) }),
  ),
  resetFactors: writeUser.delete(
    '/:userId/mfa',
    {
      summary: "Reset a user's second factors: every passkey, the authenticator app and the recovery codes",
      description:
        'Needs users:write and strictly more rights than every role the account holds (as for changing its email). Not for ' +
        "one's own account (403: use the account page, under its re-authentication rule). The user is mailed; sessions stay.",
      response: removed('Reset (also when there was nothing to remove)'),
    },
    async ({ principal, params }, ctx) => {
      await resetUserFactors(ctx, principal, params.userId);
    },
  ),
  invite: endpointsWith(WRITE).post(
    '/',
    {
      summary: 'Invite a user (beyond the spec): emails a set-password link',
      body: inviteUserBody,
      response: { status: 201, ...one },
      errors: [404, 409],
    },
    async ({ principal, body }, ctx) => ({ user: presentUserDetail(await users.inviteUser(ctx, principal, body)) }),
  ),
  resendInvitation: writeUser.post(
    '/:userId/invitation',
    {
      summary: 'Send a pending invitation again: earlier links stop working, the new one is valid invitation_ttl_hours',
      response: { description: '{ user } (status invited, the new invitation_expires_at)', schema: userDetailEnvelope },
      errors: [404, 409],
    },
    async ({ principal, params }, ctx) => ({ user: presentUserDetail(await users.resendInvitation(ctx, principal, params.userId)) }),
  ),
  get: readUser.get('/:userId', { summary: 'User detail with roles and permissions', response: one }, async ({ params }, ctx) => ({
    user: presentUserDetail(await users.getUserDetail(ctx, params.userId)),
  })),
  identities: readUser.get(
    '/:userId/identities',
    {
      summary: "The user's identities of other providers; needs_confirmation marks one paused since the upgrade",
      response: { description: '{ identities }', schema: identitiesBody },
    },
    async ({ params }, ctx) => ({ identities: (await userAdmin.listIdentitiesOfUser(ctx, params.userId)).map(presentIdentity) }),
  ),
  deactivate: endpointsWith({ auth: 'user', permission: 'users:delete', params: userIdParams }).delete(
    '/:userId',
    {
      summary: 'Deactivate a user and revoke their sessions',
      response: { description: '{ user } (is_active false)', schema: userDetailEnvelope },
      errors: [409],
    },
    async ({ principal, params }, ctx) => ({ user: presentUserDetail(await users.deactivateUser(ctx, principal, params.userId)) }),
  ),
  revokeSession: endpointsWith({ ...WRITE, params: userSessionParams }).delete(
    '/:userId/sessions/:sessionId',
    {
      summary: "Revoke one of a user's sessions",
      description: 'Needs the rights to edit the account (CONTRACT §8). Audited as auth.session.revoked.',
      response: removed('Revoked'),
    },
    async ({ principal, params }, ctx) => {
      await userAdmin.revokeSessionOfUser(ctx, principal, params.userId, params.sessionId);
    },
  ),
  passwordLink: writeUser.post(
    '/:userId/set-password-link',
    {
      summary: 'Email the user a link to choose a password',
      description: 'Follows the take-over rule of CONTRACT §8 (like changing the email). Audited as user.password_link_sent.',
      response: { status: 202, description: '{ success: true }', schema: successBody },
    },
    async ({ principal, params }, ctx) => {
      await userAdmin.sendPasswordLinkToUser(ctx, principal, params.userId);
      return { success: true as const };
    },
  ),
};

/** The list's filter as the services take it. */
function filterOf(q: { search?: string; status?: 'active' | 'inactive'; tier?: 'admin' }) {
  return { search: q.search || undefined, status: q.status, holdingRoles: q.tier === 'admin' ? ADMIN_TIER : undefined };
}

/** Users (spec §4.4). The fixed paths (admin/list, roles/*) come before /:userId, which must be a uuid. */
export function createUsersRouter(deps: RouteDeps) {
  const role = createRoleRoutes();
  return declareRouter(
    deps,
    [
      role.adminUsers('/admin/list'),
      route(
        {
          method: 'get',
          path: '/roles/list',
          summary: 'Active roles',
          auth: 'user',
          permission: 'system:manage_roles',
          response: { description: '{ roles }', schema: rolesBody },
        },
        async ({ ctx }) => ({ roles: (await listRoles(ctx, { activeOnly: true })).map(presentRole) }),
      ),
      served(deps, rolesApi.assignable),
      ...role.catalogueChanges,
      served(deps, usersApi.list),
      served(deps, usersApi.count),
      // Beyond the spec (CONTRACT §6): invite a user, who sets a password through the mailed link.
      served(deps, usersApi.invite),
      served(deps, usersApi.resendInvitation),
      served(deps, usersApi.get),
      served(deps, usersApi.identities),
      served(deps, usersApi.update),
      served(deps, usersApi.deactivate),
      // CONTRACT §11: an administrator resets a user's second factors (e.g. a lost phone); audited and mailed.
      served(deps, usersApi.resetFactors),
      // Beyond the spec: what the console's user page shows and does (CONTRACT §14), for API clients too.
      served(deps, usersApi.sessions),
      served(deps, usersApi.revokeSession),
      served(deps, usersApi.factors),
      served(deps, usersApi.apps),
      served(deps, usersApi.activity),
      served(deps, usersApi.passwordLink),
      ...role.ofUser(''),
    ],
    { tags: ['Users'] },
  );
}
