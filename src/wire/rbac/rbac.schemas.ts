import { z } from 'zod';
import { sayIssue } from '../../i18n';
import { timestampFields, updateBody, uuidField } from '../common.schemas';
import type { RoleRef } from '../../services/role-assignment.service';
import { roleRefBody } from '../users/users.schemas';

const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;

export const roleNameField = z
  .string({ error: 'name must be a string' })
  .trim()
  .min(1, 'name is required')
  .max(64, 'name is too long')
  .regex(IDENTIFIER, 'name may contain letters, digits and _ . : - only');

/** null (or absent) = a global role. */
export const applicationField = z
  .string({ error: 'application must be a string or null' })
  .trim()
  .min(1, 'application must not be empty (use null for a global role)')
  .max(100, 'application is too long')
  .regex(IDENTIFIER, 'application may contain letters, digits and _ . : - only')
  .nullable();

const descriptionField = z.string({ error: 'description must be a string' }).trim().max(500, 'description is too long');

const permissionsField = z
  .array(z.string({ error: 'each permission must be a string' }).trim().min(1).max(100), {
    error: 'permissions must be an array of strings',
  })
  .max(100, 'too many permissions');

/** Scopes of API resources the role grants (`resource` = the resource's identifier); the whole list is replaced. */
const apiScopesField = z
  .array(
    z.object(
      {
        resource: z
          .string({ error: 'resource must be a string (the API resource identifier)' })
          .trim()
          .min(1, 'resource is required')
          .max(2048),
        scope: z.string({ error: 'scope must be a string' }).trim().min(1, 'scope is required').max(100),
      },
      { error: 'each api_scopes entry must be { resource, scope }' },
    ),
    { error: 'api_scopes must be an array of { resource, scope }' },
  )
  .max(500, 'too many api_scopes');

export const roleIdParams = z.object({ roleId: uuidField('roleId') });
export const userIdParams = z.object({ userId: uuidField('userId') });
export const userRoleParams = z.object({ userId: uuidField('userId'), roleId: uuidField('roleId') });

export const createRoleBody = z
  .object({
    name: roleNameField,
    description: descriptionField.optional(),
    application: applicationField.optional(),
    permissions: permissionsField.optional(),
    api_scopes: apiScopesField.optional(),
  })
  .transform(({ api_scopes, ...b }) => ({ ...b, apiScopes: api_scopes }));

export const updateRoleBody = updateBody({
  name: roleNameField,
  description: descriptionField,
  /** Re-points an application-scoped role (e.g. one created with a free-text name) at another application. */
  application: applicationField,
  permissions: permissionsField,
  api_scopes: apiScopesField,
  is_active: z.boolean({ error: 'is_active must be a boolean' }),
}).transform(({ api_scopes, is_active, ...b }) => ({ ...b, apiScopes: api_scopes, isActive: is_active }));

/** CONTRACT §6: `{ role_id }` or `{ role: name, application? }`. */
export const assignRoleBody = z
  .object({
    role_id: uuidField('role_id').optional(),
    role: roleNameField.optional(),
    application: applicationField.optional(),
  })
  .refine((b) => (b.role_id === undefined) !== (b.role === undefined), sayIssue('roleIdOrName'))
  .transform((b): RoleRef =>
    b.role_id !== undefined ? { roleId: b.role_id } : { role: b.role ?? '', application: b.application ?? null },
  );

export const checkPermissionBody = z.object({
  permission: z.string({ error: 'permission is required' }).trim().min(1, 'permission is required').max(100),
});

/** Role (CONTRACT §6). */
export const roleBody = z
  .strictObject({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    application: z.string().nullable(),
    permissions: z.array(z.string()),
    api_scopes: z
      .array(z.strictObject({ resource: z.string(), scope: z.string() }))
      .meta({ description: 'Scopes of API resources the role grants (resource = the identifier); docs/rbac.md' }),
    is_active: z.boolean(),
    ...timestampFields,
  })
  .meta({ id: 'Role' });

export type Role = z.output<typeof roleBody>;

export const roleEnvelope = z.strictObject({ role: roleBody });

export const rolesBody = z.strictObject({ roles: z.array(roleBody) });

/**
 * A role an account holds and how (CONTRACT §20): `assigned` (to the account itself) and/or through the SCIM groups
 * in `scim_groups` (mapped to the role, the account a member). A role held only through groups is removed by the
 * directory or by the mapping, not by `DELETE /api/users/:userId/roles/:roleId`.
 */
export const heldRoleBody = roleBody
  .extend({
    assigned: z.boolean(),
    scim_groups: z.array(z.strictObject({ id: z.string(), display_name: z.string(), connection_id: z.string() })),
  })
  .meta({ id: 'HeldRole' });
export const heldRolesBody = z.strictObject({ roles: z.array(heldRoleBody) });

export const permissionsBody = z.strictObject({ permissions: z.array(z.strictObject({ name: z.string(), description: z.string() })) });

export const userAccessBody = z.strictObject({ user_id: z.uuid(), roles: z.array(roleRefBody), permissions: z.array(z.string()) });

export const hasPermissionBody = z.strictObject({ hasPermission: z.boolean() });
