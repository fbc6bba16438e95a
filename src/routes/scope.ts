import type { Router } from 'express';
import type { Dispatcher } from '../http/dispatch';
import type { RouteDeps, ScopeOptions, ScopeSteps } from './route';
import type { DeclaredAppRoute } from './route-table';

export type { ScopeOptions, ScopeSteps } from './route';

export function joinPath(...parts: string[]): string {
  const joined = `/${parts
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;
  return joined;
}

/**
 * Scopes (issue 22): each group of routes is mounted with exactly the steps it needs, the way node-oidc-provider gives
 * each route its own step list instead of global middleware. A scope's steps run inside each of its routes (after the
 * route matched, so a request runs the steps of one scope only, once), before the route's own (authentication,
 * guards, validation); its error boundary, when it has one, ends each route, so an error raised by a step (the
 * limiter, a body parser) or by the route is answered in the scope's dialect. What a scope adds cannot be forgotten
 * by a route: a router mounted in the administration scope is under MFA_REQUIRED_FOR_ADMINS, one mounted in the OAuth
 * protocol scope answers in RFC 6749's dialect, whatever its declarations say.
 */
export class Scope {
  /**
   * @param target the app's one router, which every route of every scope is added to
   * @param base the full path the scope's mount paths are relative to (`/api` for the API, '' for the app)
   */
  constructor(
    private readonly target: Dispatcher,
    private readonly base: string,
    private readonly options: ScopeOptions,
    private readonly table: DeclaredAppRoute[],
    private readonly deps: Omit<RouteDeps, 'scope'>,
  ) {}

  /**
   * Mounts the routes `create` declares at `path` (relative to the scope's base), in the app's one router. The router
   * must be built by `declareRouter` from these deps, which adds each route there: a router with no declared route,
   * or with anything Express would have to route itself, is refused, so nothing reaches the app without a declaration
   * (and so without its place in the OpenAPI document and the permission matrix).
   */
  mount(path: string, create: (deps: RouteDeps) => Router): void {
    const prefix = joinPath(this.base, path);
    let recorded = 0;
    const target = this.target;
    const scope: ScopeSteps = {
      ...this.options,
      steps: this.options.steps ?? [],
      route: (method, routePath, chain, labelled) => {
        const full = joinPath(prefix, routePath);
        target.on(method, full, labelled ? full : undefined, chain);
      },
      files: (filesPath, chain) => target.files(joinPath(prefix, filesPath), chain),
      record: (decl) => {
        recorded++;
        this.table.push({ method: decl.method, path: joinPath(prefix, decl.path), decl });
      },
    };
    const router = create({ ...this.deps, scope });
    if (recorded === 0) throw new Error(`${prefix}: a scope mounts only routers built by declareRouter with its deps`);
    if (router.stack.length > 0) throw new Error(`${prefix}: a scope's routes are added to the app's router, not to an Express router`);
  }

  /** A scope on the same mount target with other options (e.g. the OAuth dialect, the admin policy). */
  with(options: ScopeOptions): Scope {
    return new Scope(this.target, this.base, { ...this.options, ...options }, this.table, this.deps);
  }
}
