import { z } from 'zod';
import { isGlobalSuperAdmin } from '../../declarations/roles';
import { rolesApi } from '../../routes/rbac/roles.routes';
import { formMapping, list, text, type Caller } from '../action';
import type { RoleChoice } from './scim.view';

/** The SCIM forms: a connection's name and description, and the roles a group is mapped to, as the API's bodies. */
export const connectionBody = formMapping({ form: z.object({ name: text(300), description: text(600) }), input: (f) => f, field: 'name' });
export const rolesBody = formMapping({ form: z.object({ role_ids: list() }), input: (f) => f, field: 'role_ids' });

/**
 * The roles a group may be mapped to (active, never the global super_admin), and the ones it is mapped to now: read
 * through GET /api/users/roles/assignable, guarded like the group pages (users:manage_roles, no admin role needed).
 */
export async function roleChoices({ call }: Caller, mapped: readonly string[] = []): Promise<RoleChoice[]> {
  const { roles } = await call(rolesApi.assignable, {});
  return roles
    .filter((r) => !isGlobalSuperAdmin(r) && (r.is_active || mapped.includes(r.id)))
    .map((r) => ({ id: r.id, name: r.name, application: r.application }));
}
