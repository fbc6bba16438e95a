import type { HeldRoleRow, PermissionRow, RoleRow } from '../../db/repositories/roles.repo';

/** Role (CONTRACT §6). Fields are listed one by one: nothing else leaks. */
export function presentRole(role: RoleRow) {
  return {
    id: role.id,
    name: role.name,
    description: role.description,
    application: role.application,
    permissions: role.permissions,
    api_scopes: role.apiScopes.map((a) => ({ resource: a.resource, scope: a.scope })),
    is_active: role.isActive,
    created_at: role.createdAt.toISOString(),
    updated_at: role.updatedAt.toISOString(),
  };
}

export function presentHeldRole(role: HeldRoleRow) {
  return {
    ...presentRole(role),
    assigned: role.assigned,
    scim_groups: role.scimGroups.map((g) => ({ id: g.id, display_name: g.displayName, connection_id: g.connectionId })),
  };
}

export function presentPermission(permission: PermissionRow) {
  return { name: permission.name, description: permission.description };
}
