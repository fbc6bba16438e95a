import { runInRequest } from '../../lib/request-context';
import type { ErrorRequestHandler, Request, Response } from 'express';
import { z } from 'zod';
import type { Config } from '../../config';
import { AppError, forbidden, type Said } from '../../errors';
import { isValidationKey, saidOfIssue, validationKeyOf, validationText } from '../../i18n';
import { issueCsrf } from '../../middleware/csrf';
import type { ServiceContext } from '../../services/context';
import type { Principal } from '../../services/principal';
import { adminRank, hasPermission, SPEC_ADMIN_ROLES } from '../../services/rbac-policy';
import { renderOAuthErrorPage } from '../../views/consent';
import { RefusalText, type FieldErrors, type Refusal } from '../../views/console/components';
import { pageEnv } from '../../views/env';
import { CONSOLE_NAV, type ConsoleFrame, type ConsoleSection } from '../../views/console/layout';
import type { Endpoint, RouteDecl } from '../route';
import { listDeclaredRoutes, passesGuard } from '../route-table';
import { renderConsoleError } from '../../views/console/pages';
import { hostedPage, PAGE, sendHostedPage, writePage } from '../pages/page-kit';
import { Page } from '../../http/outcome';

/**
 * What the console's routes share (CONTRACT §14): the declaration base, the page frame (CSRF field, flash message),
 * the flash cookie of post-redirect-get, form fields, API-schema errors as field errors, and the router's refusal
 * pages (not signed in -> /login?return_to=, no admin role or permission -> 403 page).
 */

/** Every console route: a page for a signed-in browser, never cached, not in the API description. */
export const CONSOLE = { ...PAGE, auth: 'page', tags: ['Console'], response: { description: 'HTML page', kind: 'html' } } as const;

const FLASH_COOKIE = 'console_flash';

/** The result of an action, shown once on the next page (the post-redirect-get's "flash"). */
export function setFlash(res: Response, config: Pick<Config, 'cookieSecure'>, kind: 'ok' | 'error', message: Refusal): void {
  const value =
    typeof message === 'string'
      ? { kind, message: message.slice(0, 300) }
      : { kind, message: message.text.slice(0, 300), detail: message.detail.slice(0, 300) };
  res.cookie(FLASH_COOKIE, JSON.stringify(value), {
    httpOnly: true,
    sameSite: 'strict',
    secure: config.cookieSecure,
    path: '/admin',
    maxAge: 60_000,
  });
}

function takeFlash(req: Request, res: Response): ConsoleFrame['flash'] {
  const raw: unknown = req.cookies?.[FLASH_COOKIE];
  if (typeof raw !== 'string') return undefined;
  res.clearCookie(FLASH_COOKIE, { path: '/admin' });
  const parsed = z
    .object({ kind: z.enum(['ok', 'error']), message: z.string().max(300), detail: z.string().max(300).optional() })
    .safeParse(safeJson(raw));
  return parsed.success ? parsed.data : undefined;
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** The frame of a console page: who is signed in, the CSRF value of its forms, and the flash of the last action. */
export function frameOf(
  req: Request,
  res: Response,
  config: Config,
  principal: Principal,
  section: ConsoleSection | undefined,
  title: string,
): ConsoleFrame {
  return {
    title,
    section,
    email: principal.email,
    // Live from the session's roles; a global super_admin's are the whole catalogue (principal.repo.ts).
    permissions: principal.permissions,
    sections: sectionsFor(req, principal),
    csrf: issueCsrf(req, res, config),
    flash: takeFlash(req, res),
  };
}

/**
 * The console sections a principal may open: each entry of the navigation whose page (the GET route declared at its
 * href) lets the principal through its guard. The route's declaration is the only list of who may see what.
 */
export function sectionsFor(req: Request, principal: Principal): ConsoleSection[] {
  const pages = new Map(listDeclaredRoutes(req.app).flatMap((r) => (r.method === 'get' ? [[r.path, r.decl] as const] : [])));
  return CONSOLE_NAV.flatMap((item) => {
    const decl = pages.get(item.href);
    return decl && passesGuard(decl, principal) ? [item.id] : [];
  });
}

/** Where an admin lands: the first section it may open (the overview for admin and super_admin). */
export function landingOf(req: Request, principal: Principal): string | undefined {
  const first = sectionsFor(req, principal)[0];
  return CONSOLE_NAV.find((item) => item.id === first)?.href;
}

/** A checkbox group: absent, one value or several. */
export const list = () =>
  z
    .unknown()
    .transform((v) => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []))
    .default([]);

/** Lines of a textarea, trimmed, empty ones dropped. */
export const lines = (value: string) =>
  value
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);

/** The issues of an API schema as messages by top-level field (what the console's forms show next to each input). */
export function fieldErrors(issues: readonly z.core.$ZodIssue[]): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of issues) out[String(issue.path[0] ?? '_form')] ??= said(issue.message, saidOfIssue(issue));
  return out;
}

/**
 * An API validation message in the page's language (CONTRACT §18): in English the message itself; otherwise the
 * catalogue's sentence of the refusal's key (`said`, given where the rule is declared; a schema's plain message is
 * the catalogue's English sentence and finds its key so), or "not accepted" with the English reason as detail.
 */
export function said(message: string, key?: Said): Refusal {
  const { locale, t } = pageEnv();
  if (locale === 'en') return message;
  if (key && isValidationKey(key.key)) return validationText(t, key.key, key.params);
  const known = validationKeyOf(message);
  return known ? validationText(t, known) : { text: t.console.errors.invalidField, detail: message };
}

/**
 * A service's refusal as field errors: the details of a 4xx AppError by top-level field (`redirect_uris`,
 * `allowed_resources`, `issuer`, `url`...), or its message on `fallback`; undefined for anything else (a server error).
 */
export function serviceFieldErrors(err: unknown, fallback: string): FieldErrors | undefined {
  if (!(err instanceof AppError) || err.status < 400 || err.status >= 500) return undefined;
  const out: FieldErrors = {};
  for (const detail of err.details ?? []) {
    const key = detail.path.split(/[.[]/)[0] || fallback;
    out[key] ??= said(detail.message, detail.said);
  }
  if (Object.keys(out).length === 0) out[fallback] = refusalOf(err);
  return out;
}

/** The status a refused form is shown again with: the service's 4xx, else 400. */
export const refusalStatus = (err: unknown): number => (err instanceof AppError ? err.status : 400);

/** A checkbox's value: checked sends "true", unchecked sends nothing. */
export const checked = (value: string): boolean => value === 'true';

/**
 * A refusal the person can act on: a 4xx AppError, said by its code in the page's language with the API's English
 * message as the detail (CONTRACT §15; in English, the message itself); anything else is a server error.
 */
export function refusalOf(err: unknown): Refusal | undefined {
  if (!(err instanceof AppError && err.status >= 400 && err.status < 500)) return undefined;
  const { locale, t } = pageEnv();
  if (locale === 'en') return err.message;
  if (err.said && isValidationKey(err.said.key)) return validationText(t, err.said.key, err.said.params);
  return { text: t.pageErrors[err.code], detail: err.message };
}

/**
 * The console router's error boundary: the guards of the route declarations (authenticate, MFA_REQUIRED_FOR_ADMINS,
 * admin tier, permission) raise the API's errors; here they become what a browser needs.
 */
export function consoleRefusals(config: Config): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (!(err instanceof AppError)) return next(err);
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
    if (err.status === 401) {
      const back = req.method === 'GET' ? req.originalUrl : '/admin';
      return res.redirect(303, `/login?${new URLSearchParams({ return_to: back })}`);
    }
    const principal = req.principal;
    const isAdminTier = principal !== undefined && adminRank(principal.roleNames) > 0;
    const e = pageEnv().t.console.errors;
    if (err.status === 403) {
      const mfa = err.code === 'mfa_required';
      if (!principal || !isAdminTier || mfa) {
        return sendHostedPage(
          hostedPage(() => renderOAuthErrorPage({ title: e.notAllowed, message: mfa ? e.needsFactor : e.adminsOnly }), 403),
          res,
        );
      }
      // The console's front door (/admin) for an admin who may not see the overview (a manager): the first section it
      // may open, rather than "Not allowed".
      const landing =
        req.method === 'GET' && req.originalUrl.split('?')[0]?.replace(/\/+$/, '') === '/admin' ? landingOf(req, principal) : undefined;
      if (landing && landing !== '/admin') return res.redirect(303, landing);
      const refusal = refusalOf(err) ?? err.message;
      const message = RefusalText({ value: refusal });
      return writeConsoleError(req, res, config, principal, 403, { title: e.notAllowed, message });
    }
    if ((err.status === 404 || err.code === 'validation_error') && principal && isAdminTier) {
      return writeConsoleError(req, res, config, principal, 404, { title: e.notFound, message: e.notFoundText });
    }
    next(err);
  };
}

/** A refusal in the console's frame (the error boundary's page, written outside a route's last step). */
function writeConsoleError(
  req: Request,
  res: Response,
  config: Config,
  principal: Principal,
  status: number,
  error: { title: string; message: Parameters<typeof renderConsoleError>[1]['message'] },
): void {
  const refusal = new Page<ConsoleFrame>((frame) => renderConsoleError(frame, error), error.title, status);
  writePage(refusal, res, () => frameOf(req, res, config, principal, undefined, error.title));
}

/** A console form whose CSRF pair is missing or wrong. */
export function refuseConsoleForm(_req: Request, res: Response): void {
  const { refused, formExpired } = pageEnv().t.console.errors;
  sendHostedPage(
    hostedPage(() => renderOAuthErrorPage({ title: refused, message: formExpired }), 403),
    res,
  );
}

/** Who a console page acts for: the principal, another endpoint run behind its own guard, and whether a guard lets them by. */
export interface EndpointCaller {
  principal: Principal;
  /** Another endpoint of the API, run for the same caller (the thing a confirmation names, the subject of a page). */
  call<R>(e: Endpoint<RouteDecl, R>, input: { params?: unknown; query?: unknown }): Promise<R>;
  /** Whether the caller passes `e`'s guard: a page offers a button only to whom its endpoint would let through. */
  allows(e: Endpoint<RouteDecl, unknown>): boolean;
  /**
   * Runs `draw` (synchronously) as part of the request, so that the words it reads are in the request's language: what
   * a callback draws after an `await` (lib/request-context.ts: the request is known only to its synchronous code).
   */
  inRequest<T>(draw: () => T): T;
}

/**
 * Runs another endpoint of the API for the same caller, behind that endpoint's own guard (its permission, role and
 * admin rule): a console page never reads more than its caller could read through the API.
 */
export const callerOf = (ctx: ServiceContext, principal: Principal, req: Request): EndpointCaller => ({
  principal,
  call: async <R>(other: Endpoint<RouteDecl, R>, i: { params?: unknown; query?: unknown }) => {
    const refused = guardRefusal(other.decl, principal);
    if (refused) throw forbidden(refused);
    return other.run({ params: i.params, query: i.query, body: undefined, principal }, ctx);
  },
  allows: (other) => guardRefusal(other.decl, principal) === undefined,
  inRequest: (draw) => runInRequest(req, draw),
});

/** Why a declaration's guard refuses the principal (the words of src/middleware/authorize.ts), or undefined. */
function guardRefusal(d: RouteDecl, principal: Principal): string | undefined {
  if (d.permission !== undefined && !hasPermission(principal, d.permission)) return `Requires permission ${d.permission}`;
  const roles: readonly string[] = d.role === undefined ? [] : typeof d.role === 'string' ? [d.role] : d.role;
  if (roles.length > 0 && !roles.some((r) => principal.roleNames.includes(r))) return `Requires role ${roles.join(' or ')}`;
  if (d.admin && !SPEC_ADMIN_ROLES.some((r) => principal.roleNames.includes(r))) return `Requires role ${SPEC_ADMIN_ROLES.join(' or ')}`;
  return undefined;
}
