/**
 * One typed declaration per route: guard, validation, cache policy and documentation in one place.
 *
 *   route(
 *     {
 *       method: 'put', path: '/:userId', summary: 'Update a user', tags: ['Users'],
 *       auth: 'user', permission: 'users:write',
 *       params: userIdParams, body: updateUserBody,
 *       response: { description: '{ user }', schema: userEnvelope },
 *       errors: [409],
 *     },
 *     async ({ params, body, principal }) => ({ user: presentUserDetail(await users.updateUser(ctx, principal, params.userId, body)) }),
 *   )
 *
 * The handler receives the `z.output<>` of params, query and body (camelCase domain input when the schema
 * transforms) and the principal the `auth` mode guarantees; what it returns is sent as JSON with the declared
 * status. `declareRouter(deps, [route(...), ...])` mounts the routes on an Express router, and
 * src/routes/route-table.ts reads the declarations back from the app to build the OpenAPI document and the
 * permission matrix test. A route mounted any other way under /api fails test/e2e/route-declarations.test.ts.
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { AppError } from '../errors';
import { csrfValid } from '../middleware/csrf';
import { requireAdminSecondFactor } from '../middleware/mfa-policy';
import { requireAllowedOrigin } from '../middleware/origin-check';
import { requireAdmin, requirePermission, requireRole } from '../middleware/authorize';
import { zodDetails } from '../middleware/validate';
import { ADMIN_TIER, type Principal } from '../services/principal';
import { renderOAuthErrorPage } from '../views/consent';
import { renderErrorPage } from '../views/errors';
import { runInRequest } from '../lib/request-context';
import type { RouteDeps } from './types';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * - `none`: public.
 * - `user`: a first-party access token (Bearer header or accessToken cookie); 401 without, 403 for a token issued to
 *   an OAuth client.
 * - `user-or-client`: as `user`, and tokens issued to OAuth clients are accepted too.
 * - `browser`: optional first-party session of a browser; an expired access cookie is renewed from the refresh
 *   cookie (CONTRACT §3). The handler gets `principal` or undefined.
 * - `client`: OAuth client authentication (client_secret_basic / _post), done by the handler (documented only).
 * - `token`: an OAuth Bearer access token read by the handler in the OAuth dialect (documented only).
 * - `page`: a signed-in first-party browser (cookies, renewed from the refresh cookie like `browser`), with the same
 *   guards as `user`; the administration console. Its refusals (401, 403) are answered as pages by the router that
 *   mounts it (src/routes/console/console-kit.ts).
 */
export type AuthMode = 'none' | 'user' | 'user-or-client' | 'browser' | 'client' | 'token' | 'page';

export interface ResponseDecl {
  /** Success status; 200 when omitted. */
  status?: number;
  description: string;
  /** The JSON body; checked against the returned value when NODE_ENV=test (never in production). */
  schema?: z.ZodType;
  /** `html` pages, `redirect` (3xx) or `empty` bodies; `json` when omitted. */
  kind?: 'json' | 'html' | 'redirect' | 'empty';
}

type Schema = z.ZodType | undefined;

export interface RouteDecl<P extends Schema = Schema, Q extends Schema = Schema, B extends Schema = Schema> {
  method: HttpMethod;
  /** Express path, relative to where the router is mounted. */
  path: string;
  summary: string;
  description?: string;
  /** OpenAPI tags; the router's default when omitted. */
  tags?: readonly string[];
  auth: AuthMode;
  /** Guards (any of them requires an `auth` that yields a principal). */
  permission?: string;
  role?: string | readonly string[];
  /** The spec's "permission admin": role admin or super_admin (CONTRACT §6). */
  admin?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** The body may be omitted (documented as not required). */
  bodyOptional?: boolean;
  /** Also accepts application/x-www-form-urlencoded (OAuth endpoints, HTML forms). */
  form?: boolean;
  /** Turns a validation failure into another error (e.g. a malformed id answering 404, OAuth invalid_request). */
  invalid?: (issues: z.core.$ZodIssue[], where: 'params' | 'query' | 'body') => Error;
  response?: ResponseDecl;
  /** Further documented statuses beyond what the declaration implies (400/401/403/404/429 are derived). */
  errors?: number[];
  /** A status that can also answer with another body than `{ error, message }` (documented as oneOf). */
  errorBodies?: Partial<Record<number, { description: string; schema: z.ZodType }>>;
  /** Errors in the RFC 6749 dialect `{ error, error_description }` (OAuth protocol endpoints). */
  dialect?: 'oauth';
  /** The app's rate limiter on this route (the /api limiter already covers every /api path: pages only). */
  rateLimit?: boolean;
  /** Cache-Control: no-store and Pragma: no-cache on every answer, errors included (tokens, secrets, forms). */
  noStore?: boolean;
  /** Cache-Control of a successful answer (public documents: `public, max-age=300`). */
  cacheControl?: string;
  /**
   * Also answered before the Express stack (src/middleware/public-lane.ts) when the request is exactly `GET <path>`
   * with no query and no Origin (an authenticated route: also no body): for routes called at high rates. The handler reads nothing from the request
   * but the principal (it gets no `req`/`res`), has no inputs, guards or CSRF check, and only reads. Two kinds:
   * - `auth: 'none'`, a public document at /health or under /.well-known (/health, discovery), with no limiter;
   * - `auth: 'user'` or `'user-or-client'` under /api (GET /api/auth/me): only a request with a Bearer header takes
   *   the lane, which runs the /api limiter and the same live check as `authenticate`; anything that is not a
   *   success there (429, 401, 403, an error) is answered by Express, without counting the request twice.
   * Both ways give the same answer, headers included (test/e2e/public-lane.test.ts).
   */
  lane?: boolean;
  /** A present Origin must be BASE_URL's or allow-listed (login CSRF defence of endpoints that set cookies). */
  originCheck?: boolean;
  /** HTML form post: the double-submit CSRF pair must match, else `refuse` answers (usually 403 with a page). */
  csrf?: (req: Request, res: Response) => void;
  /** Left out of the OpenAPI document (HTML pages). */
  document?: boolean;
  /**
   * A console page or action (auth 'page'): the REST route it mirrors, as `METHOD /api/path`. It must declare the
   * same guard (test/e2e/console-permissions.test.ts). Absent where the API has no such route (docs/console.md).
   */
  twin?: string;
  /**
   * MFA_REQUIRED_FOR_ADMINS applies (CONTRACT §10): an admin-tier caller whose session has no second factor gets 403
   * mfa_required. Set for whole routers (users, RBAC, admin) through `declareRouter`'s `secondFactorForAdmins`.
   */
  secondFactorForAdmins?: boolean;
}

/** The parsed value of a declared schema (`unknown` when the route declares none, so nothing undeclared is read). */
type Out<S> = z.output<S>;
type PrincipalFor<A extends AuthMode> = A extends 'user' | 'user-or-client' | 'page'
  ? Principal
  : A extends 'browser'
    ? Principal | undefined
    : undefined;

export interface RouteInput<D extends RouteDecl> {
  params: Out<D['params']>;
  query: Out<D['query']>;
  body: Out<D['body']>;
  principal: PrincipalFor<D['auth']>;
}

export type RouteHandler<D extends RouteDecl> = [D] extends [{ lane: true }]
  ? (input: RouteInput<D>) => unknown
  : (input: RouteInput<D>, req: Request, res: Response) => unknown;

export interface DeclaredRoute {
  decl: RouteDecl;
  /** Called without `req` and `res` only for a `lane` route, whose handler type takes none. */
  handler: (input: RouteInput<RouteDecl>, req?: Request, res?: Response) => unknown;
}

/** Declares a route; mount it with `declareRouter`. */
export function route<const D extends RouteDecl>(decl: D, handler: RouteHandler<D>): DeclaredRoute {
  const guarded = decl.permission !== undefined || decl.role !== undefined || decl.admin === true;
  if (guarded && decl.auth !== 'user' && decl.auth !== 'user-or-client' && decl.auth !== 'page') {
    throw new Error(`${decl.method.toUpperCase()} ${decl.path}: a guard needs auth 'user', 'user-or-client' or 'page'`);
  }
  if (decl.noStore && decl.cacheControl !== undefined) {
    throw new Error(`${decl.method.toUpperCase()} ${decl.path}: noStore and cacheControl are two answers to one question`);
  }
  if (decl.lane) {
    assertLaneable(decl);
    // Declared with a `lane` that is not the literal true, the handler's type would allow req/res, which the lane
    // does not pass.
    if (handler.length > 1) throw new Error(`${decl.method.toUpperCase()} ${decl.path}: a lane route's handler takes no req or res`);
  }
  // The one cast of the edge: RouteInput<D> is computed from D, and the chain builds exactly that shape at runtime
  // (params, query and body parsed by D's own schemas, the principal guaranteed by D's auth mode).
  return { decl, handler: handler as DeclaredRoute['handler'] };
}

/** What a `lane` route may not have: anything that reads the request or guards it. */
function assertLaneable(decl: RouteDecl): void {
  const reads = ['params', 'query', 'body', 'permission', 'role', 'admin', 'rateLimit', 'originCheck', 'csrf', 'secondFactorForAdmins'] as const;
  const found = reads.filter((key) => decl[key] !== undefined && decl[key] !== false);
  const auth = decl.auth === 'none' || decl.auth === 'user' || decl.auth === 'user-or-client';
  if (decl.method !== 'get' || !auth || found.length > 0) {
    throw new Error(
      `${decl.method.toUpperCase()} ${decl.path}: a lane route is a GET with auth 'none', 'user' or 'user-or-client' and no ${found.join(', ') || 'inputs'}`,
    );
  }
}

/** A lane route's answer, computed the way its Express handler computes it. */
export interface LaneResult {
  status: number;
  body: unknown;
}

/** A lane route's handler: the principal of an authenticated lane route, undefined for a public one. */
export type LaneAnswer = (principal: Principal | undefined) => Promise<LaneResult>;

const laneAnswers = new WeakMap<RouteDecl, LaneAnswer>();

/** How the lane answers a declared `lane` route (undefined for any other route). */
export function laneAnswerOf(decl: RouteDecl): LaneAnswer | undefined {
  return laneAnswers.get(decl);
}

/** The declaration of each route's last handler, where route-table.ts finds it when it walks the app. */
const declarations = new WeakMap<object, RouteDecl>();

export function declarationOf(fn: unknown): RouteDecl | undefined {
  return typeof fn === 'function' ? declarations.get(fn) : undefined;
}

export interface RouterOptions {
  /** Default tags of the router's routes. */
  tags?: readonly string[];
  /** Existing router to add the routes to. */
  router?: Router;
  /** Every route of the router is under the MFA_REQUIRED_FOR_ADMINS policy (RouteDecl.secondFactorForAdmins). */
  secondFactorForAdmins?: boolean;
}

/** Builds an Express router from declarations, in order (fixed paths before parameterised ones). */
export function declareRouter(deps: RouteDeps, routes: DeclaredRoute[], options: RouterOptions = {}): Router {
  const router = options.router ?? Router();
  for (const declared of routes) {
    let decl: RouteDecl = declared.decl.tags || !options.tags ? declared.decl : { ...declared.decl, tags: options.tags };
    if (options.secondFactorForAdmins) decl = { ...decl, secondFactorForAdmins: true };
    if (decl.lane) assertLaneable(decl);
    router[decl.method](decl.path, ...chainOf(deps, decl, declared.handler));
  }
  return router;
}

/** A handler's answer with a status other than the declared one (e.g. 200 instead of 201 when nothing was created). */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

export const reply = (status: number, body: unknown): Reply => new Reply(status, body);

export function noStore(res: Response): void {
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
}

const NO_STORE: RequestHandler = (_req, res, next) => {
  noStore(res);
  next();
};

function chainOf(deps: RouteDeps, decl: RouteDecl, handler: DeclaredRoute['handler']): RequestHandler[] {
  const chain: RequestHandler[] = [];
  if (decl.rateLimit) {
    if (!deps.rateLimit) throw new Error(`${decl.path}: rateLimit declared but the router has no limiter`);
    chain.push(decl.document === false || decl.response?.kind === 'html' ? pageRateLimit(deps.rateLimit) : deps.rateLimit);
  }
  if (decl.noStore) chain.push(NO_STORE);
  if (decl.originCheck) chain.push(requireAllowedOrigin(deps.ctx.config));
  const authenticate = authenticatorFor(deps, decl.auth);
  if (authenticate) chain.push(authenticate);
  // The console is for holders of an admin-tier role, whatever the page (CONTRACT §14).
  if (decl.auth === 'page') chain.push(requireRole(...ADMIN_TIER));
  if (decl.secondFactorForAdmins) chain.push(requireAdminSecondFactor(deps.ctx.config));
  if (decl.permission !== undefined) chain.push(requirePermission(decl.permission));
  if (decl.role !== undefined) chain.push(requireRole(...(typeof decl.role === 'string' ? [decl.role] : decl.role)));
  if (decl.admin) chain.push(requireAdmin());
  const refuse = decl.csrf;
  if (refuse) {
    const config = deps.ctx.config;
    chain.push((req, res, next) => (csrfValid(req, config) ? next() : refuse(req, res)));
  }

  const checkResponse = deps.ctx.config.nodeEnv === 'test' && decl.response?.schema ? decl.response.schema : undefined;
  const status = decl.response?.status ?? 200;
  const { cacheControl } = decl;
  if (decl.lane) {
    laneAnswers.set(decl, async (principal) => {
      const result = await handler({ params: undefined, query: undefined, body: undefined, principal });
      const [code, body] = result instanceof Reply ? [result.status, result.body] : [status, result];
      if (checkResponse && code < 400) assertResponse(decl, checkResponse, body);
      return { status: code, body };
    });
  }
  const final: RequestHandler = async (req, res) => {
    const input: RouteInput<RouteDecl> = {
      params: decl.params ? parse(decl, 'params', req.params) : undefined,
      query: decl.query ? parse(decl, 'query', req.query) : undefined,
      body: decl.body ? parse(decl, 'body', req.body) : undefined,
      principal: req.principal,
    };
    const result = await handler(input, req, res);
    if (res.headersSent) return;
    if (result === undefined) {
      res.status(status).end();
      return;
    }
    const [code, body] = result instanceof Reply ? [result.status, result.body] : [status, result];
    if (checkResponse && code < 400) assertResponse(decl, checkResponse, body);
    if (cacheControl !== undefined && code < 400) res.set('Cache-Control', cacheControl);
    res.status(code).json(body);
  };
  declarations.set(final, decl);
  chain.push(final);
  return chain;
}

/**
 * The limiter in front of an HTML page's form post: over the limit, the person gets a 429 page (Retry-After kept), not
 * the API's JSON body in their browser.
 */
function pageRateLimit(limit: RequestHandler): RequestHandler {
  return (req, res, next) =>
    limit(req, res, (err?: unknown) => {
      if (!(err instanceof AppError) || err.code !== 'rate_limited') return next(err);
      if (err.headers) res.set(err.headers);
      noStore(res);
      const retryAfter = Number(err.headers?.['Retry-After']);
      // The limiter's store may call back outside the request's async context: render inside it (language, brand).
      res
        .status(429)
        .type('html')
        .send(runInRequest(req, () => renderErrorPage(429, Number.isFinite(retryAfter) ? retryAfter : undefined)));
    });
}

function authenticatorFor(deps: RouteDeps, auth: AuthMode): RequestHandler | undefined {
  switch (auth) {
    case 'user':
      return deps.authenticate();
    case 'user-or-client':
      return deps.authenticate({ allowClientTokens: true });
    case 'browser':
      return deps.authenticate({ optional: true, refreshFromCookie: true });
    case 'page':
      return deps.authenticate({ refreshFromCookie: true });
    default:
      return undefined;
  }
}

const WHAT = { params: 'Path', query: 'Query', body: 'Body' } as const;

function parse(decl: RouteDecl, where: 'params' | 'query' | 'body', value: unknown): unknown {
  const schema = decl[where]!;
  const result = schema.safeParse(where === 'body' && decl.bodyOptional !== true ? (value ?? {}) : value);
  if (result.success) return result.data;
  if (decl.invalid) throw decl.invalid(result.error.issues, where);
  throw new AppError('validation_error', `${WHAT[where]} is invalid`, { details: zodDetails(result.error) });
}

/** Test runs only: the body sent must match the declared response schema (as a client would read it). */
function assertResponse(decl: RouteDecl, schema: z.ZodType, body: unknown): void {
  const parsed = schema.safeParse(JSON.parse(JSON.stringify(body)));
  if (!parsed.success) {
    const problems = zodDetails(parsed.error).map((d) => `${d.path}: ${d.message}`).join('; ');
    throw new Error(`${decl.method.toUpperCase()} ${decl.path} answered outside its declared response schema: ${problems}`);
  }
}
