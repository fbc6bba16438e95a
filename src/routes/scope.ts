import type { RequestHandler, Router } from 'express';
import { labelRoute } from '../middleware/metrics';
import type { RouteDeps, ScopeOptions, ScopeSteps } from './route';
import type { DeclaredAppRoute } from './route-table';

export type { ScopeOptions, ScopeSteps } from './route';

/** Anything Express can mount a router on: the app or a router. */
interface MountTarget {
  use(path: string, ...handlers: RequestHandler[]): unknown;
}

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
   * @param target where routers are mounted (the app, or the scope's own router)
   * @param base the full path of `target` (`/api` for the API router, '' for the app)
   */
  constructor(
    private readonly target: MountTarget,
    private readonly base: string,
    private readonly options: ScopeOptions,
    private readonly table: DeclaredAppRoute[],
    private readonly deps: Omit<RouteDeps, 'scope'>,
  ) {}

  /**
   * Mounts the router `create` builds at `path` (relative to the scope's base). The router must be built by
   * `declareRouter` from these deps: a router with no declared route is refused, so nothing reaches the app without a
   * declaration (and so without its place in the OpenAPI document and the permission matrix).
   */
  mount(path: string, create: (deps: RouteDeps) => Router): void {
    const prefix = joinPath(this.base, path);
    let recorded = 0;
    const scope: ScopeSteps = {
      ...this.options,
      steps: this.options.steps ?? [],
      label: (decl) => labelRoute(joinPath(prefix, decl.path)),
      record: (decl) => {
        recorded++;
        this.table.push({ method: decl.method, path: joinPath(prefix, decl.path), decl });
      },
    };
    const router = create({ ...this.deps, scope });
    if (recorded === 0) throw new Error(`${prefix}: a scope mounts only routers built by declareRouter with its deps`);
    this.target.use(joinPath(path), router);
  }

  /** A scope on the same mount target with other options (e.g. the OAuth dialect, the admin policy). */
  with(options: ScopeOptions): Scope {
    return new Scope(this.target, this.base, { ...this.options, ...options }, this.table, this.deps);
  }
}
