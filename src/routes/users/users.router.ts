import { resetUserFactors } from '../../services/mfa/factor-reset.service';
import { z } from 'zod';
import * as userAdmin from '../../services/user-admin.service';
import * as users from '../../services/users.service';
import { sessionsBody } from '../auth/account.schemas';
import { presentSession } from '../auth/account.router';
import { presentPasskey } from '../auth/mfa.router';
import { mfaStatusBody } from '../auth/mfa.schemas';
import { successBody, uuidField } from '../common.schemas';
import { listRoles } from '../../services/role-catalogue.service';
import { presentRole } from '../rbac/rbac.presenters';
import { rolesBody, userIdParams } from '../rbac/rbac.schemas';
import { createRoleRoutes, rolesApi } from '../rbac/roles.routes';
import { declareRouter, endpoint, route, served } from '../route';
import type { RouteDeps } from '../types';
import { listOwnIdentities } from '../../services/federation/identities.service';
import { presentIdentity } from '../federation/federation.presenters';
import { identitiesBody } from '../federation/identity-providers.schemas';
import { presentUserDetail, presentUserSummary } from './users.presenters';
import { inviteUserBody, listUsersQuery, updateUserBody, userDetailEnvelope, usersPageBody } from './users.schemas';

/** The routes of users that the console's user pages are built from (src/console/users/users.console.ts). */
export const usersApi = {
  list: endpoint(
    {
      method: 'get',
      path: '/',
      summary: 'List users (query search, page, limit <= 100)',
      auth: 'user',
      permission: 'users:read',
      query: listUsersQuery,
      response: { description: '{ users, total, page, limit }', schema: usersPageBody },
    },
    async ({ query }, ctx) => {
      const { users: page, total } = await users.listUsers(ctx, query);
      return { users: page.map((u) => presentUserSummary(u.user, u.roles)), total, page: query.page, limit: query.limit };
    },
  ),
  update: endpoint(
    {
      method: 'put',
      path: '/:userId',
      summary: 'Update a user',
      auth: 'user',
      permission: 'users:write',
      params: userIdParams,
      body: updateUserBody,
      response: { description: '{ user }', schema: userDetailEnvelope },
      errors: [409],
    },
    async ({ principal, params, body }, ctx) => ({ user: presentUserDetail(await users.updateUser(ctx, principal, params.userId, body)) }),
  ),
  resetFactors: endpoint(
    {
      method: 'delete',
      path: '/:userId/mfa',
      summary: "Reset a user's second factors: every passkey, the authenticator app and the recovery codes",
      description:
        'Needs users:write and strictly more rights than every role the account holds (as for changing its email). Not for ' +
        "one's own account (403: use the account page, under its re-authentication rule). The user is mailed; sessions stay.",
      auth: 'user',
      permission: 'users:write',
      params: userIdParams,
      response: { status: 204, description: 'Reset (also when there was nothing to remove)', kind: 'empty' },
    },
    async ({ principal, params }, ctx) => {
      await resetUserFactors(ctx, principal, params.userId);
    },
  ),
  invite: endpoint(
    {
      method: 'post',
      path: '/',
      summary: 'Invite a user (beyond the spec): emails a set-password link',
      auth: 'user',
      permission: 'users:write',
      body: inviteUserBody,
      response: { status: 201, description: '{ user }', schema: userDetailEnvelope },
      errors: [404, 409],
    },
    async ({ principal, body }, ctx) => ({ user: presentUserDetail(await users.inviteUser(ctx, principal, body)) }),
  ),
  resendInvitation: endpoint(
    {
      method: 'post',
      path: '/:userId/invitation',
      summary: 'Send a pending invitation again: earlier links stop working, the new one is valid invitation_ttl_hours',
      auth: 'user',
      permission: 'users:write',
      params: userIdParams,
      response: { description: '{ user } (status invited, the new invitation_expires_at)', schema: userDetailEnvelope },
      errors: [404, 409],
    },
    async ({ principal, params }, ctx) => ({ user: presentUserDetail(await users.resendInvitation(ctx, principal, params.userId)) }),
  ),
  get: endpoint(
    {
      method: 'get',
      path: '/:userId',
      summary: 'User detail with roles and permissions',
      auth: 'user',
      permission: 'users:read',
      params: userIdParams,
      response: { description: '{ user }', schema: userDetailEnvelope },
    },
    async ({ params }, ctx) => ({ user: presentUserDetail(await users.getUserDetail(ctx, params.userId)) }),
  ),
  identities: endpoint(
    {
      method: 'get',
      path: '/:userId/identities',
      summary: "The user's identities of other providers; needs_confirmation marks one paused since the upgrade",
      auth: 'user',
      permission: 'users:read',
      params: userIdParams,
      response: { description: '{ identities }', schema: identitiesBody },
      errors: [404],
    },
    async ({ params }, ctx) => {
      await users.getUserDetail(ctx, params.userId);
      return { identities: (await listOwnIdentities(ctx, params.userId)).map(presentIdentity) };
    },
  ),
  deactivate: endpoint(
    {
      method: 'delete',
      path: '/:userId',
      summary: 'Deactivate a user and revoke their sessions',
      auth: 'user',
      permission: 'users:delete',
      params: userIdParams,
      response: { description: '{ user } (is_active false)', schema: userDetailEnvelope },
      errors: [409],
    },
    async ({ principal, params }, ctx) => ({ user: presentUserDetail(await users.deactivateUser(ctx, principal, params.userId)) }),
  ),
  revokeSession: endpoint(
    {
      method: 'delete',
      path: '/:userId/sessions/:sessionId',
      summary: "Revoke one of a user's sessions",
      description: 'Needs the rights to edit the account (CONTRACT §8). Audited as auth.session.revoked.',
      auth: 'user',
      permission: 'users:write',
      params: z.object({ userId: uuidField('userId'), sessionId: uuidField('sessionId') }),
      response: { status: 204, description: 'Revoked', kind: 'empty' },
    },
    async ({ principal, params }, ctx) => {
      await userAdmin.revokeSessionOfUser(ctx, principal, params.userId, params.sessionId);
    },
  ),
  passwordLink: endpoint(
    {
      method: 'post',
      path: '/:userId/set-password-link',
      summary: 'Email the user a link to choose a password',
      description: 'Follows the take-over rule of CONTRACT §8 (like changing the email). Audited as user.password_link_sent.',
      auth: 'user',
      permission: 'users:write',
      params: userIdParams,
      response: { status: 202, description: '{ success: true }', schema: successBody },
    },
    async ({ principal, params }, ctx) => {
      await userAdmin.sendPasswordLinkToUser(ctx, principal, params.userId);
      return { success: true as const };
    },
  ),
};

/** Users (spec §4.4). The fixed paths (admin/list, roles/*) come before /:userId, which must be a uuid. */
export function createUsersRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const role = createRoleRoutes(ctx);
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
        async () => ({ roles: (await listRoles(ctx, { activeOnly: true })).map(presentRole) }),
      ),
      served(deps, rolesApi.assignable),
      role.create('/roles'),
      role.update('/roles/:roleId'),
      role.deactivate('/roles/:roleId'),
      served(deps, usersApi.list),
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
      route(
        {
          method: 'get',
          path: '/:userId/sessions',
          summary: "A user's live sessions",
          auth: 'user',
          permission: 'users:read',
          params: userIdParams,
          noStore: true,
          response: { description: '{ sessions: [...] } (current is always false)', schema: sessionsBody },
        },
        async ({ params }) => ({ sessions: (await userAdmin.listSessionsOfUser(ctx, params.userId)).map((s) => presentSession(s, '')) }),
      ),
      served(deps, usersApi.revokeSession),
      route(
        {
          method: 'get',
          path: '/:userId/mfa',
          summary: "A user's second factors (never their secrets)",
          auth: 'user',
          permission: 'users:read',
          params: userIdParams,
          noStore: true,
          response: { description: '{ totp, passkeys, recovery_codes_left }', schema: mfaStatusBody },
        },
        async ({ params }) => {
          const factors = await userAdmin.listFactorsOfUser(ctx, params.userId);
          return { totp: factors.totp, passkeys: factors.passkeys.map(presentPasskey), recovery_codes_left: factors.recoveryCodesLeft };
        },
      ),
      served(deps, usersApi.passwordLink),
      role.listOfUser('/:userId/roles'),
      role.assignToUser('/:userId/roles'),
      role.removeFromUser('/:userId/roles/:roleId'),
    ],
    { tags: ['Users'] },
  );
}
