import { z } from 'zod';
import { connectedAppBody, sessionsBody } from '../auth/account.schemas';
import { adminRoleField, identityShape } from '../auth/auth.schemas';
import { mfaStatusBody } from '../auth/mfa.schemas';
import { identitiesBody } from '../federation/identity-providers.schemas';
import { auditEventsBody } from '../audit/audit.schemas';
import { emailField, nameField, pageLimitField, timestampField, timestampFields, updateBody, uuidField } from '../common.schemas';

export const USERS_PAGE_MAX = 100;

const userCursorField = (name: string, description: string) =>
  z.uuid({ error: `${name} must be a user id (a cursor this list gave out)` }).meta({ description });

export const listUsersQuery = z.object({
  search: z.string({ error: 'search must be a single string' }).trim().max(200, 'search is too long').optional(),
  status: z
    .enum(['active', 'inactive'], { error: 'status must be active or inactive' })
    .optional()
    .meta({ description: 'Only active, or only deactivated, accounts' }),
  tier: z
    .enum(['admin'], { error: 'tier must be admin' })
    .optional()
    .meta({ description: 'admin: only holders of an active global super_admin, admin or manager role' }),
  page: z.coerce
    .number({ error: 'page must be a number' })
    .int('page must be an integer')
    .min(1, 'page starts at 1')
    .max(1_000_000)
    .default(1),
  limit: pageLimitField(20, USERS_PAGE_MAX),
  paging: z
    .enum(['pages', 'cursor'], { error: 'paging must be pages or cursor' })
    .default('pages')
    .meta({
      description:
        'pages (the default): by page number, with the exact total. cursor: by keyset (next_cursor, prev_cursor), without ' +
        'counting; page and total are then null (GET /api/users/count says how many match). cursor or before imply it.',
    }),
  cursor: userCursorField('cursor', 'next_cursor of the previous answer: the page after it (older accounts)').optional(),
  before: userCursorField('before', 'prev_cursor of a later answer: the page before it (newer accounts); ignored with cursor').optional(),
});

/** GET /api/users/count: how many accounts the list's filter matches. */
export const usersCountBody = z.strictObject({
  count: z.strictObject({ kind: z.enum(['exact', 'more-than', 'about']), value: z.number().int() }).meta({
    description: 'exact; more-than (a filtered count stops at 10,000); about (the estimate of an unfiltered table beyond that)',
  }),
});

export const inviteUserBody = z
  .object({
    email: emailField,
    first_name: nameField('first_name'),
    last_name: nameField('last_name'),
    role_ids: z.array(uuidField('role_ids[]'), { error: 'role_ids must be an array of uuids' }).max(20).optional(),
  })
  .transform((b) => ({ email: b.email, firstName: b.first_name, lastName: b.last_name, roleIds: b.role_ids }));

export const updateUserBody = updateBody({
  first_name: nameField('first_name'),
  last_name: nameField('last_name'),
  email: emailField,
  is_active: z.boolean({ error: 'is_active must be a boolean' }),
  email_verified: z.boolean({ error: 'email_verified must be a boolean' }),
}).transform((b) => ({
  firstName: b.first_name,
  lastName: b.last_name,
  email: b.email,
  isActive: b.is_active,
  emailVerified: b.email_verified,
}));

/** `{ id, name, application }`: a role inside user objects (CONTRACT §6). */
export const roleRefBody = z.strictObject({ id: z.uuid(), name: z.string(), application: z.string().nullable() });

const userSummaryShape = {
  ...identityShape,
  roles: z.array(roleRefBody),
  ...timestampFields,
  last_login_at: timestampField.nullable(),
  status: z.enum(['invited', 'active', 'inactive']).meta({
    description: 'invited: an invitation not yet accepted (no password set); inactive: deactivated; else active',
  }),
  invitation_expires_at: timestampField.nullable().meta({
    description: 'while invited: when the invitation link stops working (it may be resent); null otherwise',
  }),
};

export const userSummaryBody = z.strictObject(userSummaryShape).meta({ id: 'UserSummary' });

export const userDetailBody = z.strictObject({ ...userSummaryShape, permissions: z.array(z.string()) }).meta({ id: 'UserDetail' });

export const userDetailEnvelope = z.strictObject({ user: userDetailBody });

export const usersPageBody = z.strictObject({
  users: z.array(userSummaryBody),
  total: z.number().int().nullable().meta({ description: 'How many accounts match; null when paging by cursor' }),
  page: z.number().int().nullable().meta({ description: 'The page number asked for; null when paging by cursor' }),
  limit: z.number().int(),
  next_cursor: z.uuid().nullable().meta({ description: 'Passed as cursor: the next page (older accounts); null on the last page' }),
  prev_cursor: z.uuid().nullable().meta({ description: 'Passed as before: the previous page (newer accounts); null on the first page' }),
});

/** A user as the API sends it (list item, and the detail with its permissions). */
export type UserSummary = z.output<typeof userSummaryBody>;
export type UserDetail = z.output<typeof userDetailBody>;

export const adminUsersBody = z.strictObject({
  users: z.array(z.strictObject({ ...userSummaryShape, adminRole: adminRoleField })),
});

/** GET /api/users/:userId/apps: the applications the user approved. */
export const userAppsBody = z.strictObject({ apps: z.array(connectedAppBody) });

/** GET /api/users/:userId/activity: events about the user, each as the audit trail presents it. */
export const userActivityBody = z.strictObject({ events: auditEventsBody.shape.events, next_cursor: z.string().nullable() });

/** What a user's page reads, as the API sends it (the console's user page renders these). */
export type UserSession = z.output<typeof sessionsBody>['sessions'][number];
export type UserFactors = z.output<typeof mfaStatusBody>;
export type UserIdentity = z.output<typeof identitiesBody>['identities'][number];
export type { ConnectedApp } from '../auth/account.schemas';
