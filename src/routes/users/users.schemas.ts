import { z } from 'zod';
import { sayIssue } from '../../i18n';
import { adminRoleField, identityShape } from '../auth/auth.schemas';
import { emailField, nameField, timestampField, timestampFields, uuidField } from '../common.schemas';

export const USERS_PAGE_MAX = 100;

export const listUsersQuery = z.object({
  search: z.string({ error: 'search must be a single string' }).trim().max(200, 'search is too long').optional(),
  page: z.coerce
    .number({ error: 'page must be a number' })
    .int('page must be an integer')
    .min(1, 'page starts at 1')
    .max(1_000_000)
    .default(1),
  // A larger limit is capped rather than refused; the response echoes the limit applied.
  limit: z.coerce
    .number({ error: 'limit must be a number' })
    .int('limit must be an integer')
    .min(1, 'limit must be at least 1')
    .default(20)
    .transform((n) => Math.min(n, USERS_PAGE_MAX)),
});

export const inviteUserBody = z
  .object({
    email: emailField,
    first_name: nameField('first_name'),
    last_name: nameField('last_name'),
    role_ids: z.array(uuidField('role_ids[]'), { error: 'role_ids must be an array of uuids' }).max(20).optional(),
  })
  .transform((b) => ({ email: b.email, firstName: b.first_name, lastName: b.last_name, roleIds: b.role_ids }));

export const updateUserBody = z
  .object({
    first_name: nameField('first_name').optional(),
    last_name: nameField('last_name').optional(),
    email: emailField.optional(),
    is_active: z.boolean({ error: 'is_active must be a boolean' }).optional(),
    email_verified: z.boolean({ error: 'email_verified must be a boolean' }).optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), sayIssue('nothingToUpdate'))
  .transform((b) => ({
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
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
});

export const adminUsersBody = z.strictObject({
  users: z.array(z.strictObject({ ...userSummaryShape, adminRole: adminRoleField })),
});
