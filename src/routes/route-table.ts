import type { Application } from 'express';
import { declarationOf, type HttpMethod, type RouteDecl } from './route';

/** One route of the running app, as Express will match it, with its declaration when it has one. */
export interface AppRoute {
  method: HttpMethod;
  /** Full Express path, e.g. /api/users/:userId. */
  path: string;
  decl?: RouteDecl;
}

/** The parts of router 2.x's Layer and Route that the walk reads. */
interface Layer {
  rawPath?: unknown;
  handle?: { stack?: Layer[] };
  route?: { path: unknown; methods: Record<string, boolean>; stack: Layer[] };
}

function join(prefix: string, path: string): string {
  const joined = `${prefix.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  return joined.length > 1 ? joined.replace(/\/+$/, '') : joined;
}

/** Express's types describe neither rawPath nor route.methods: the walk reads router 2.x's objects as they are. */
function isLayers(value: unknown): value is Layer[] {
  return Array.isArray(value);
}

function isMethod(method: string): method is HttpMethod {
  return ['get', 'post', 'put', 'patch', 'delete'].includes(method);
}

function walk(stack: unknown, prefix: string, out: AppRoute[]): void {
  if (!isLayers(stack)) return;
  for (const layer of stack) {
    if (layer.route) {
      if (typeof layer.route.path !== 'string') continue;
      const decl = layer.route.stack.map((l) => declarationOf(l.handle)).find((d) => d !== undefined);
      for (const [method, on] of Object.entries(layer.route.methods)) {
        if (on && isMethod(method)) out.push({ method, path: join(prefix, layer.route.path), decl });
      }
    } else if (layer.handle?.stack && typeof layer.rawPath === 'string') {
      walk(layer.handle.stack, join(prefix, layer.rawPath), out);
    }
  }
}

/**
 * Every route of the app, read back from its router stack (the mount path of each router included), in the
 * order Express tries them. Declared routes carry their declaration.
 */
export function listAppRoutes(app: Application): AppRoute[] {
  return listRouterRoutes(app.router);
}

/** The routes of one router, paths relative to where it is mounted. */
export function listRouterRoutes(router: { stack: unknown }): AppRoute[] {
  const out: AppRoute[] = [];
  walk(router.stack, '/', out);
  return out;
}

export type DeclaredAppRoute = AppRoute & { decl: RouteDecl };

export function listDeclaredRoutes(app: Application): DeclaredAppRoute[] {
  return listAppRoutes(app).filter((r): r is DeclaredAppRoute => r.decl !== undefined);
}

/** The guard of a declared route, when it has one. */
export type Guard = { permission: string } | { roles: readonly string[] } | { admin: true };

export function guardOf(decl: RouteDecl): Guard | undefined {
  if (decl.permission !== undefined) return { permission: decl.permission };
  if (decl.admin) return { admin: true };
  if (decl.role !== undefined) return { roles: typeof decl.role === 'string' ? [decl.role] : decl.role };
  return undefined;
}
