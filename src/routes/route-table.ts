import type { Application } from 'express';
import { hasPermission, SPEC_ADMIN_ROLES } from '../services/rbac-policy';
import type { HttpMethod, MountedRouteDecl } from './route';

/** One declared route of the app, as mounted: its full Express path and its declaration with what its scope added. */
export interface DeclaredAppRoute {
  method: HttpMethod;
  /** Full Express path, e.g. /api/users/:userId. */
  path: string;
  decl: MountedRouteDecl;
}

const tables = new WeakMap<object, DeclaredAppRoute[]>();

/** createApp's route table, filled by its scopes as they mount routers (src/routes/scope.ts). */
export function registerRouteTable(app: Application, table: DeclaredAppRoute[]): void {
  tables.set(app, table);
}

/**
 * Every declared route of the app, in the order Express tries them: read from the app's own declarations as its scopes
 * mounted them, never from Express's router internals.
 */
export function listDeclaredRoutes(app: Application): DeclaredAppRoute[] {
  return tables.get(app) ?? [];
}

/** The guard of a declared route, when it has one. */
export type Guard = { permission: string } | { roles: readonly string[] } | { admin: true };

export function guardOf(decl: MountedRouteDecl): Guard | undefined {
  if (decl.permission !== undefined) return { permission: decl.permission };
  if (decl.admin) return { admin: true };
  if (decl.role !== undefined) return { roles: typeof decl.role === 'string' ? [decl.role] : decl.role };
  return undefined;
}

/**
 * Whether a principal passes a declared route's guard (its permission, role or the spec's "admin"): what the guard's
 * middleware would decide, read from the same declaration (the console's navigation shows a section only to who
 * may open it, issue 32).
 */
export function passesGuard(decl: MountedRouteDecl, principal: { roleNames: readonly string[]; permissions: readonly string[] }): boolean {
  const guard = guardOf(decl);
  if (!guard) return true;
  if ('permission' in guard) return hasPermission(principal, guard.permission);
  if ('admin' in guard) return SPEC_ADMIN_ROLES.some((r) => principal.roleNames.includes(r));
  return guard.roles.some((r) => principal.roleNames.includes(r));
}
