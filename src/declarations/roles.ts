/** The role names the server relies on (docs/rbac.md), shared by the RBAC rules and the console's role choices. */
export const SUPER_ADMIN = 'super_admin';

/** The global super_admin: never offered as a mapping or an assignment where only an owner may grant it. */
export function isGlobalSuperAdmin(role: { name: string; application: string | null }): boolean {
  return role.name === SUPER_ADMIN && role.application === null;
}
