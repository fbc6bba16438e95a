/**
 * The route declaration and its handler adapter: one typed declaration per route (guard, validation, cache policy
 * and documentation in one place), turned into the Express steps that enforce it.
 *
 *   route(
 *     {
 *       method: 'put', path: '/:userId', summary: 'Update a user', tags: ['Users'],
 *       auth: 'user', permission: 'users:write',
 *       params: userIdParams, body: updateUserBody,
 *       response: { description: '{ user }', schema: userEnvelope },
 *       errors: [409],
 *     },
 *     async ({ params, body, principal, ctx }) =>
 *       ({ user: presentUserDetail(await users.updateUser(ctx, principal, params.userId, body)) }),
 *   )
 *
 * The handler receives the `z.output<>` of params, query and body (camelCase domain input when the schema
 * transforms), the principal the `auth` mode guarantees and the request's service context `ctx` (which it hands to the
 * services it calls); what it returns is sent as JSON with the declared
 * status. `declareRouter(deps, [route(...), ...])` builds the Express router; where it is mounted (a scope,
 * src/routes/scope.ts) decides the steps every route of it runs first, its error dialect and its admin policy, and
 * records each route in the app's route table (src/routes/route-table.ts), which the OpenAPI document and the
 * permission matrix test read.
 */
import cors from 'cors';
import { createHash } from 'node:crypto';
import { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { AppError, badRequest, notFound } from '../errors';
import { csrfValid } from '../middleware/csrf';
import { requireAdminSecondFactor } from '../middleware/mfa-policy';
import { scimAuthenticate } from '../middleware/scim-authenticate';
import { requireAllowedOrigin } from '../middleware/origin-check';
import { pageEnvOf, type PageEnv } from '../middleware/page-env';
import { requireAdmin, requirePermission, requireRole } from '../middleware/authorize';
import { zodDetails } from '../middleware/validate';
import type { Authenticate } from '../middleware/authenticate';
import { ADMIN_TIER, type Principal } from '../services/principal';
import type { AppContext, ServiceContext } from '../services/context';
import type { Config } from '../config';
import { Answer, Document, Outcome, writeCookiesAndHeaders, writeDocument } from '../http/outcome';
import type { Step } from '../http/dispatch';
import { createClientCors, type ClientCors, type ClientOrigins } from '../http/client-cors';
import { responseChecker } from './docs/response-check';
import { contextOf } from '../middleware/request-context';
import { enterRequest, leaveRequest } from '../lib/request-context';

/** CONTRACT §18: public documents any web page may read: `*`, never credentials (a preflight is answered too). */
const PUBLIC_PREFLIGHT: RequestHandler = cors({ origin: '*', methods: ['GET', 'HEAD'], maxAge: 600 });
/** What the cors package answers to a GET or HEAD with that configuration, without building it per request. */
const PUBLIC_CORS: RequestHandler = (req, res, next) => {
  if (req.method === 'OPTIONS') return PUBLIC_PREFLIGHT(req, res, next);
  res.setHeader('Access-Control-Allow-Origin', '*');
  next();
};

/** What every router factory receives. */
export interface RouteDeps {
  /** What the router is built with (config, settings, db, …): records and mails nothing (services/context.ts AppContext). */
  ctx: AppContext;
  /** The process's context, from which the route adapter makes each request's (`contextOf`): the adapter's, not a router's. */
  readonly serviceContext: ServiceContext;
  authenticate: Authenticate;
  /** The per-IP limiter for routes that declare `rateLimit` (the hosted forms: pages, whose scope answers 429 as a page). */
  rateLimit?: RequestHandler;
  /** The per-IP budget of dynamic client registration (CONTRACT §13), for routes that declare `rateLimit: 'registration'`. */
  registrationRateLimit?: RequestHandler;
  /** Which browser origins a client lists, for routes that declare `cors: 'client'` (src/app.ts passes the service's). */
  clientOrigins?: ClientOrigins;
  /** The scope the router is mounted in (src/routes/scope.ts): its steps, dialect and policy; none outside an app. */
  scope?: ScopeSteps;
}

/** What a scope gives every route it mounts (src/routes/scope.ts). */
export interface ScopeOptions {
  /** Steps every route of the scope runs first, in order. */
  steps?: readonly RequestHandler[];
  /** CORS for allow-listed origins (a route opts out with `cors: false`); none when omitted. */
  cors?: RequestHandler;
  /** The end of every route's chain: errors of the steps and of the route, in the scope's dialect. */
  boundary?: ErrorRequestHandler;
  /** Documented dialect of the boundary (the OpenAPI error bodies). */
  dialect?: 'oauth';
  /** Every route is under MFA_REQUIRED_FOR_ADMINS (CONTRACT §10). */
  secondFactorForAdmins?: boolean;
}

/** What `declareRouter` reads from `deps.scope` while it builds the routes that this scope mounts. */
export interface ScopeSteps extends ScopeOptions {
  steps: readonly RequestHandler[];
  /**
   * Adds a route's whole chain to the app's one router (src/http/dispatch.ts) at its full path; `labelled`: the
   * duration histogram labels its requests with that path (a CORS preflight is not labelled).
   */
  route(method: string, path: string, chain: readonly Step[], labelled: boolean): void;
  /** Static files below `path` (GET/HEAD), not declared routes: the chain sees `req.url` relative to `path`. */
  files(path: string, chain: readonly Step[]): void;
  /** Records a route in the app's route table. */
  record(decl: MountedRouteDecl): void;
}

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
 * - `scim`: the Bearer token of a SCIM connection (CONTRACT §20); the connection is `req.scimConnection` and the actor
 *   of the request's audit events; 401 without.
 */
export type AuthMode = 'none' | 'user' | 'user-or-client' | 'browser' | 'client' | 'token' | 'page' | 'scim';

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
  /**
   * The route's own body parser, run before the scope's (whose JSON parser then leaves the body alone): a bigger body
   * or another media type than the scope's 100 kB of JSON (e.g. the user import's 16 MB of JSON or CSV).
   */
  bodyParser?: RequestHandler;
  /** Turns a validation failure into another error (e.g. a malformed id answering 404, OAuth invalid_request). */
  invalid?: (issues: z.core.$ZodIssue[], where: 'params' | 'query' | 'body') => Error;
  response?: ResponseDecl;
  /** Further documented statuses beyond what the declaration implies (400/401/403/404/429 are derived). */
  errors?: number[];
  /** A status that can also answer with another body than `{ error, message }` (documented as oneOf). */
  errorBodies?: Partial<Record<number, { description: string; schema: z.ZodType }>>;
  /**
   * `true`: the app's rate limiter on this route (the /api limiter already covers every /api path: pages only).
   * `'registration'`: the separate, smaller per-IP budget of dynamic client registration (CONTRACT §13).
   */
  rateLimit?: boolean | 'registration';
  /** Cache-Control: no-store and Pragma: no-cache on every answer, errors included (tokens, secrets, forms). */
  noStore?: boolean;
  /** Cache-Control of a successful answer (public documents: `public, max-age=300`). */
  cacheControl?: string;
  /** A present Origin must be BASE_URL's or allow-listed (login CSRF defence of endpoints that set cookies). */
  originCheck?: boolean;
  /** HTML form post: the double-submit CSRF pair must match, else `refuse` answers (usually 403 with a page). */
  csrf?: (req: Request, res: Response) => void;
  /** Left out of the OpenAPI document (HTML pages). */
  document?: boolean;
  /**
   * CORS headers for allow-listed origins where the scope gives them; `false`: never (browser redirects, pages);
   * `'public'`: `Access-Control-Allow-Origin: *` without credentials, for any origin (discovery documents, JWKS:
   * CONTRACT §18); `'client'`: the endpoints a browser app calls itself (token, revocation, userinfo, device
   * authorization, PAR): CORS without credentials for the origins of the client the request names and the global
   * `allowed_origins`, preflights for any registered origin (src/http/client-cors.ts).
   */
  cors?: false | 'public' | 'client';
  /** Renders what an HTML handler returns (a Page, Redirect or Invalid of src/http/outcome.ts): the kit's last step. */
  outcome?: OutcomeRenderer;
}

export type OutcomeRenderer = (outcome: Outcome, req: Request, res: Response, config: Config) => void | Promise<void>;

/**
 * A declaration as mounted: what the scope adds to every route of it (src/routes/scope.ts), never declared on a route,
 * so that no route of an admin router or an OAuth protocol router can leave it out.
 */
export interface MountedRouteDecl extends RouteDecl {
  /** Errors in the RFC 6749 dialect `{ error, error_description }` (the OAuth protocol scope). */
  dialect?: 'oauth';
  /**
   * MFA_REQUIRED_FOR_ADMINS applies (CONTRACT §10): an admin-tier caller whose session has no second factor gets 403
   * mfa_required (the administration scope: users, RBAC, admin).
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

/**
 * What a handler gets: the parsed input, the page environment (language, catalogue, brand) of the request, and the
 * request's service context (`ctx`: the process's, with the request's origin for the security events and its language
 * for the mails), which the handler passes to the services it calls.
 */
export type HandlerInput<D extends RouteDecl> = RouteInput<D> & { env: PageEnv; ctx: ServiceContext };

export type RouteHandler<D extends RouteDecl> = (input: HandlerInput<D>, req: Request, res: Response) => unknown;

export interface DeclaredRoute {
  decl: RouteDecl;
  handler: (input: HandlerInput<RouteDecl>, req: Request, res: Response) => unknown;
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
  // The one cast of the edge: RouteInput<D> is computed from D, and the chain builds exactly that shape at runtime
  // (params, query and body parsed by D's own schemas, the principal guaranteed by D's auth mode).
  return { decl, handler: handler as DeclaredRoute['handler'] };
}

/**
 * A REST route as a value: its declaration and what it does (service call + presenter), with the context passed in.
 * The API router serves it (`serve`); a console action is built from the same object (src/console/action.ts), so the
 * guard, the parameters, the body schema and the service call are declared once for both faces.
 */
export interface Endpoint<D extends RouteDecl = RouteDecl, R = unknown> {
  readonly decl: D;
  // A method (not a property): an endpoint of any declaration is an Endpoint of RouteDecl.
  run(input: RouteInput<D>, ctx: ServiceContext): Promise<R>;
}

export function endpoint<const D extends RouteDecl, R>(
  decl: D,
  run: (input: RouteInput<D>, ctx: ServiceContext) => Promise<R>,
): Endpoint<D, R> {
  return { decl, run };
}

/** What the endpoints of a group share (`endpointsWith`). */
type SharedDecl = Pick<RouteDecl, 'auth'> &
  Partial<Pick<RouteDecl, 'permission' | 'role' | 'admin' | 'tags' | 'params' | 'invalid' | 'noStore'>>;
/** What each endpoint of a group declares itself besides its method and path: the rest (never what the group declares). */
type OwnDecl<S> = Omit<RouteDecl, 'auth' | 'method' | 'path'> & { [K in keyof S]?: never };

/** One method's endpoints of a group: `(path, the endpoint's own declaration, run)`. */
function endpointsOf<const S extends SharedDecl, const M extends HttpMethod>(shared: S, method: M) {
  return <const D extends OwnDecl<S>, R>(
    path: string,
    decl: D,
    run: (input: RouteInput<S & { method: M; path: string } & D>, ctx: ServiceContext) => Promise<R>,
  ) => endpoint({ ...shared, method, path, ...decl }, run);
}

/**
 * Endpoints that share part of their declaration, said once for the group: its guard (`{ auth: 'user', permission:
 * 'oauth_clients:read' }`) and, for the endpoints about one thing, its id parameter and what a malformed one answers
 * (`idNotFound`). Each endpoint declares its method and path, and the rest of its declaration:
 *
 *   const aWebhook = endpointsWith({
 *     auth: 'user', permission: 'system:manage_users', params: webhookIdParams, invalid: idNotFound('Webhook'),
 *   });
 *   get: aWebhook.get('/webhooks/:webhookId', { summary: 'Webhook detail', response: one }, async ({ params }, ctx) => …),
 */
export function endpointsWith<const S extends SharedDecl>(shared: S) {
  return {
    get: endpointsOf(shared, 'get'),
    post: endpointsOf(shared, 'post'),
    put: endpointsOf(shared, 'put'),
    patch: endpointsOf(shared, 'patch'),
    delete: endpointsOf(shared, 'delete'),
  };
}

/** The answer of a removal: 204, no body. */
export const removed = (description: string) => ({ status: 204, description, kind: 'empty' }) as const;

/**
 * `invalid` of the routes about one thing: a malformed id is an unknown `what` (404), as for an id never issued; a bad
 * query or body is the usual 400 with the issues.
 */
export const idNotFound =
  (what: string) =>
  (issues: z.core.$ZodIssue[], where: 'params' | 'query' | 'body'): Error =>
    where === 'params'
      ? notFound(what)
      : badRequest(
          `${WHAT[where]} is invalid`,
          issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message })),
        );

/** The routes of a group of endpoints, in their order, each run with its request's service context. */
export function serve(deps: RouteDeps, endpoints: Record<string, Endpoint>): DeclaredRoute[] {
  return Object.values(endpoints).map((e) => served(deps, e));
}

/** One endpoint's route, run with its request's service context (`input.ctx`). */
export const served = (_deps: RouteDeps, e: Endpoint): DeclaredRoute => route(e.decl, (input) => e.run(input, input.ctx));

export interface RouterOptions {
  /** Default tags of the router's routes. */
  tags?: readonly string[];
}

/**
 * A router module's factory, what a scope mounts (`api.mount('/auth', createAuthRouter)`): its routes, built with the
 * process's context (`app`: for what the routes build once; a handler takes the request's `ctx` from its input),
 * declared into a router. `export const createAuthRouter = routerOf(() => [route(...), ...])`.
 */
export function routerOf(routes: (app: AppContext, deps: RouteDeps) => DeclaredRoute[], options: RouterOptions = {}) {
  return (deps: RouteDeps): Router => declareRouter(deps, routes(deps.ctx, deps), options);
}

/** The router of an exported group of endpoints (`webhooksApi`), served in their order. */
export const servingRouter = (endpoints: Record<string, Endpoint>, options: RouterOptions = {}) =>
  routerOf((_app, deps) => serve(deps, endpoints), options);

/**
 * Builds an Express router from declarations, in order (fixed paths before parameterised ones). Each route runs the
 * steps of the scope it is declared for (`deps.scope`, src/routes/scope.ts) and then its own; the scope records it in
 * the app's route table.
 */
export function declareRouter(deps: RouteDeps, routes: DeclaredRoute[], options: RouterOptions = {}): Router {
  const router = Router();
  const scope = deps.scope;
  // In a scope, every route goes to the app's one router (src/http/dispatch.ts) with its whole chain; outside an app
  // (unit tests), to the Express router returned.
  const add = (method: HttpMethod | 'options', path: string, chain: Array<RequestHandler | ErrorRequestHandler>, labelled: boolean) => {
    if (scope) scope.route(method, path, chain, labelled);
    else router[method](path, ...chain);
  };
  const preflights = new Set<string>();
  let clientCors: ClientCors | undefined;
  for (const declared of routes) {
    const decl: MountedRouteDecl = {
      ...declared.decl,
      ...(declared.decl.tags || !options.tags ? {} : { tags: options.tags }),
      ...(scope?.dialect ? { dialect: scope.dialect } : {}),
      ...(scope?.secondFactorForAdmins ? { secondFactorForAdmins: true } : {}),
    };
    if (decl.cors === 'client') {
      // The client is named in the body: its CORS step runs after the scope's body parsers.
      if (!deps.clientOrigins)
        throw new Error(`${decl.method.toUpperCase()} ${decl.path} declares cors: 'client' without deps.clientOrigins`);
      clientCors ??= createClientCors(deps.clientOrigins);
      const chain: Array<RequestHandler | ErrorRequestHandler> = [];
      if (scope) chain.push(...scope.steps);
      chain.push(clientCors.answer, ...chainOf(deps, decl, declared.handler));
      if (scope?.boundary) chain.push(scope.boundary);
      add(decl.method, decl.path, chain, true);
      if (!preflights.has(decl.path)) {
        preflights.add(decl.path);
        // Counted by the scope's limiter like any request of the scope (a preflight may cost a lookup).
        const preflightChain: Array<RequestHandler | ErrorRequestHandler> = [...(scope?.steps ?? []), clientCors.preflight];
        if (scope?.boundary) preflightChain.push(scope.boundary);
        add('options', decl.path, preflightChain, false);
      }
      scope?.record(decl);
      continue;
    }
    const cors = decl.cors === 'public' ? PUBLIC_CORS : scope?.cors && decl.cors !== false ? scope.cors : undefined;
    const chain: Array<RequestHandler | ErrorRequestHandler> = [];
    if (cors) chain.push(cors);
    // A route's own, bigger body parser (megabytes: the user import) runs only for a caller its guard lets in: parsing
    // such a body blocks the event loop for up to a second, which nobody may cause without the right to call the
    // route (security review). The guard runs again in the route's chain, after the scope's steps.
    if (decl.bodyParser) chain.push(...guardOf(deps, decl), decl.bodyParser);
    if (scope) chain.push(...scope.steps);
    chain.push(...chainOf(deps, decl, declared.handler));
    if (scope?.boundary) chain.push(scope.boundary);
    add(decl.method, decl.path, chain, true);
    // A CORS preflight (OPTIONS) matches no declared method: the route's path answers it with the same CORS step.
    if (cors && !preflights.has(decl.path)) {
      preflights.add(decl.path);
      add('options', decl.path, [cors], false);
    }
    scope?.record(decl);
  }
  return router;
}

/**
 * What the route adapter hands a handler. The page environment (language, catalogue, brand) is chosen on first read
 * of `env` (issue 33): a handler that renders no page and sends no mail does not negotiate Accept-Language.
 */
class Input implements HandlerInput<RouteDecl> {
  readonly #req: Request;
  readonly #app: ServiceContext;
  constructor(
    readonly params: unknown,
    readonly query: unknown,
    readonly body: unknown,
    readonly principal: Principal | undefined,
    req: Request,
    app: ServiceContext,
  ) {
    this.#req = req;
    this.#app = app;
  }

  get env(): PageEnv {
    return pageEnvOf(this.#req);
  }

  get ctx(): ServiceContext {
    return contextOf(this.#app, this.#req);
  }
}

/**
 * A JSON answer serialised once (issue 33): a document that changes only with the settings (the discovery documents)
 * is built, serialised and given its ETag once per settings version, and every request sends the same bytes. A request
 * whose If-None-Match names the ETag gets 304 without a body. Returned by a handler like any body.
 */
export class PrebuiltJson<T = unknown> {
  readonly bytes: Buffer;
  readonly etag: string;
  readonly #length: string;

  constructor(readonly value: T) {
    this.bytes = Buffer.from(JSON.stringify(value), 'utf8');
    this.#length = String(this.bytes.length);
    this.etag = `"${createHash('sha256').update(this.bytes).digest('base64url').slice(0, 27)}"`;
  }

  send(req: Request, res: Response, status: number, cacheControl: string | undefined): void {
    res.setHeader('ETag', this.etag);
    if (cacheControl !== undefined) res.setHeader('Cache-Control', cacheControl);
    if (status === 200 && noneMatch(req.headers['if-none-match'], this.etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', this.#length);
    // Node leaves the body out of a HEAD answer.
    res.end(this.bytes);
  }
}

/** RFC 9110 §13.1.2: If-None-Match `*` or a list naming the ETag (weak comparison). */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  for (const tag of header.split(',')) {
    const t = tag.trim();
    if (t === etag || t === `W/${etag}`) return true;
  }
  return false;
}

/**
 * A handler's JSON answer with what a plain body cannot say: a status other than the declared one (e.g. 200 instead of
 * 201 when nothing was created), cookies set or cleared (a sign-in's session pair) and headers (a DPoP nonce). The
 * adapter writes them (`writeCookiesAndHeaders`, the same writer as the pages' outcomes); no handler writes `res`.
 */
export class Reply<B = unknown> extends Answer {
  constructor(
    /** The declared status when undefined. */
    readonly status: number | undefined,
    readonly body: B,
  ) {
    super();
  }
}

export const reply = <B>(status: number, body: B): Reply<B> => new Reply(status, body);

/** `body` with the declared status, ready to carry cookies or headers (`withCookies`, `withHeaders`). */
export const replyOf = <B>(body: B): Reply<B> => new Reply(undefined, body);

export function noStore(res: Response): void {
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
}

const NO_STORE: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  next();
};

/** Who may call the route: authentication, then its guard (role, permission, admin). */
function guardOf(deps: RouteDeps, decl: MountedRouteDecl): RequestHandler[] {
  const chain: RequestHandler[] = [];
  const authenticate = authenticatorFor(deps, decl.auth);
  if (authenticate) chain.push(authenticate);
  // The console is for holders of an admin-tier role, whatever the page (CONTRACT §14).
  if (decl.auth === 'page') chain.push(requireRole(...ADMIN_TIER));
  if (decl.secondFactorForAdmins) chain.push(requireAdminSecondFactor(deps.ctx.settings));
  if (decl.permission !== undefined) chain.push(requirePermission(decl.permission));
  if (decl.role !== undefined) chain.push(requireRole(...(typeof decl.role === 'string' ? [decl.role] : decl.role)));
  if (decl.admin) chain.push(requireAdmin());
  return chain;
}

function chainOf(deps: RouteDeps, decl: MountedRouteDecl, handler: DeclaredRoute['handler']): RequestHandler[] {
  const chain: RequestHandler[] = [];
  if (decl.noStore) chain.push(NO_STORE);
  if (decl.rateLimit) {
    const limiter = decl.rateLimit === 'registration' ? deps.registrationRateLimit : deps.rateLimit;
    if (!limiter) throw new Error(`${decl.path}: rateLimit declared but the router has no limiter`);
    chain.push(limiter);
  }
  if (decl.originCheck) chain.push(requireAllowedOrigin(deps.ctx.config, deps.ctx.settings));
  chain.push(...guardOf(deps, decl));
  const refuse = decl.csrf;
  if (refuse) {
    const config = deps.ctx.config;
    chain.push((req, res, next) => (csrfValid(req, config) ? next() : refuse(req, res)));
  }

  // Test runs only: the body sent must match the declared response schema (never in production).
  const checkResponse = deps.ctx.config.nodeEnv === 'test' ? responseChecker(decl) : undefined;
  const status = decl.response?.status ?? 200;
  const { cacheControl } = decl;
  const write = (result: unknown, req: Request, res: Response): void | Promise<void> => {
    if (res.headersSent) return;
    if (result instanceof PrebuiltJson) {
      if (checkResponse && status < 400) checkResponse(result.value);
      return result.send(req, res, status, cacheControl);
    }
    if (result instanceof Document) return writeDocument(result, res, cacheControl);
    if (result instanceof Outcome) {
      if (!decl.outcome) throw new Error(`${decl.method.toUpperCase()} ${decl.path}: an outcome without an outcome renderer`);
      return decl.outcome(result, req, res, deps.ctx.config);
    }
    let code = status;
    let body: unknown = result;
    if (result instanceof Reply) {
      writeCookiesAndHeaders(result, res);
      code = result.status ?? status;
      body = result.body;
    }
    if (body === undefined) {
      res.status(code).end();
      return;
    }
    if (checkResponse && code < 400) checkResponse(body);
    if (cacheControl !== undefined && code < 400) res.setHeader('Cache-Control', cacheControl);
    sendJson(res, code, body);
  };
  // The handler's answer, written when it is known: at once for a synchronous handler (a prebuilt document: no promise
  // and no microtask), when its promise settles for an async one. A rejection or a throw goes to the chain's errors.
  const final: RequestHandler = (req, res) => {
    const input: HandlerInput<RouteDecl> = new Input(
      decl.params ? parse(decl, 'params', decl.params, req.params) : undefined,
      decl.query ? parse(decl, 'query', decl.query, req.query) : undefined,
      decl.body ? parse(decl, 'body', decl.body, req.body) : undefined,
      req.principal,
      req,
      deps.serviceContext,
    );
    const result = handler(input, req, res);
    // An async handler's answer is written (a page drawn) after its last await: as part of the request again.
    if (result instanceof Promise) {
      return result.then((settled: unknown) => {
        const before = enterRequest(req);
        try {
          return write(settled, req, res);
        } finally {
          leaveRequest(before);
        }
      });
    }
    return write(result, req, res);
  };
  chain.push(final);
  return chain;
}

/**
 * What Express's `res.status(code).json(body)` sends for this app (no JSON replacer, spaces or escaping, no ETag, and
 * no Last-Modified, so never a 304), written directly: one stringify, one header for the length, one `end`, without
 * `res.send`'s type, charset and freshness checks on every answer. A handler that set its own Content-Type goes through
 * Express (which adds the charset to it).
 */
function sendJson(res: Response, code: number, body: unknown): void {
  // A Content-Type set before (a Reply's own header) gets Express's charset handling.
  const text = res.hasHeader('Content-Type') ? undefined : JSON.stringify(body);
  if (text === undefined) {
    res.status(code).json(body);
    return;
  }
  res.statusCode = code;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

const JSON_TYPE = 'application/json; charset=utf-8';

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
    case 'scim':
      return scimAuthenticate(deps.serviceContext);
    default:
      return undefined;
  }
}

const WHAT = { params: 'Path', query: 'Query', body: 'Body' } as const;

function parse(decl: RouteDecl, where: 'params' | 'query' | 'body', schema: z.ZodType, value: unknown): unknown {
  const result = schema.safeParse(where === 'body' && decl.bodyOptional !== true ? (value ?? {}) : value);
  if (result.success) return result.data;
  if (decl.invalid) throw decl.invalid(result.error.issues, where);
  throw new AppError('validation_error', `${WHAT[where]} is invalid`, { details: zodDetails(result.error) });
}
