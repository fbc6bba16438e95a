import { once } from 'node:events';
import type { Response } from 'express';
import { z } from 'zod';
import { AppError } from '../../errors';
import { UUID_PATTERN } from '../../lib/ids';
import * as admin from '../../services/admin.service';
import type { AuditEventRow } from '../../db/repositories/audit-events.repo';
import * as audit from '../../services/audit.service';
import { SECURITY_EVENT_TYPES } from '../../services/events';
import { listConnectedApps } from '../../services/oauth/apps.service';
import { listSigningKeys, rotateSigningKey } from '../../services/oidc/signing-keys.service';
import { ADMIN_TIER, type Principal } from '../../services/principal';
import { SUPER_ADMIN } from '../../services/rbac-policy';
import * as assignments from '../../services/role-assignment.service';
import * as catalogue from '../../services/role-catalogue.service';
import * as userAdmin from '../../services/user-admin.service';
import * as users from '../../services/users.service';
import type { ConsoleSection } from '../../views/console/layout';
import type { FieldErrors } from '../../views/console/components';
import * as views from '../../views/console/pages';
import { pageEnv } from '../../views/env';
import { auditEventsQuery } from '../audit/audit.schemas';
import { html, optionalText, text } from '../pages/page-kit';
import { userIdParams, userRoleParams } from '../rbac/rbac.schemas';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { updateUserBody } from '../users/users.schemas';
import { act, CONSOLE, confirmBody, fieldErrors, frameOf, refuseConsoleForm, refusalOf, setFlash } from './console-kit';
import { listOwnIdentities } from '../../services/federation/identities.service';

/** The console's catalogue of the request's language (CONTRACT §15). */
const c = () => pageEnv().t.console;

/** A refusal the console words itself (already in the page's language), shown as the flash of the action. */
class PageRefusal extends AppError {
  constructor(message: string) {
    super('validation_error', message);
  }
}

const USERS_PAGE = 50;
const AUDIT_PAGE = 50;
/** The columns of the audit CSV export, one row per event. */
const CSV_HEADER = ['id', 'occurred_at', 'type', 'actor_id', 'subject_id', 'client_id', 'ip', 'user_agent', 'request_id', 'detail'];
const csvRow = (e: AuditEventRow): unknown[] => [
  e.id,
  e.occurredAt.toISOString(),
  e.type,
  e.actorId,
  e.subjectId,
  e.clientId,
  e.ip,
  e.userAgent,
  e.requestId,
  e.detail,
];

const usersQuery = z.object({ q: text(200), status: text(20), tier: text(20), cursor: optionalText(60), before: optionalText(60) });
const auditForm = z.object({
  type: text(100),
  actor: text(200),
  subject: text(200),
  from: text(10),
  to: text(10),
  cursor: optionalText(60),
  before: optionalText(60),
});

/** A form's date (YYYY-MM-DD, UTC) as the API's ISO time; `nextDay` for an inclusive upper bound. */
function isoDay(day: string, nextDay = false): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return day ? day : undefined;
  const d = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== day) return day;
  if (nextDay) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

function csvCell(value: unknown): string {
  const s = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  // RFC 4180 quoting; a leading = + - @ is neutralised so that a spreadsheet never runs a cell as a formula (OWASP CSV injection).
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/**
 * The administration console under /admin (CONTRACT §14): server-rendered pages over the services the REST API uses.
 * Each route declares the guard of its REST twin (`twin`), so the console refuses exactly what the API refuses;
 * MFA_REQUIRED_FOR_ADMINS applies to every route; posts need the CSRF pair and answer 303 with a flash message.
 */
export function createConsoleRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const { config } = ctx;
  const post = { ...CONSOLE, method: 'post', csrf: refuseConsoleForm, form: true } as const;
  const frame = (req: Parameters<typeof frameOf>[0], res: Response, principal: Principal, section: ConsoleSection, title: string) =>
    frameOf(req, res, config, principal, section, title);

  const userBase = (userId: string) => `/admin/users/${userId}`;

  async function userDetailPage(
    principal: Principal,
    userId: string,
    errors: views.UserDetailData['errors'] = {},
    values?: Record<string, string>,
  ) {
    const detail = await users.getUserDetail(ctx, userId);
    const [allRoles, sessions, apps, factors, events, identities] = await Promise.all([
      catalogue.listRoles(ctx),
      userAdmin.listSessionsOfUser(ctx, userId),
      listConnectedApps(ctx, userId),
      userAdmin.listFactorsOfUser(ctx, userId),
      audit.listOwnActivity(ctx, userId, { limit: 10 }),
      listOwnIdentities(ctx, userId),
    ]);
    return {
      user: detail.user,
      roles: detail.roles,
      allRoles,
      sessions,
      apps,
      factors,
      events: events.events,
      pausedIdentities: identities.filter((i) => i.needsConfirmation).map((i) => ({ providerName: i.providerName, email: i.email })),
      errors,
      values,
      isSelf: userId === principal.userId,
    };
  }

  const isSuperAdmin = (p: Principal) => p.roleNames.includes(SUPER_ADMIN);

  return declareRouter(
    deps,
    [
      // Overview
      route(
        { ...CONSOLE, method: 'get', path: '/', summary: 'Console: overview', admin: true, twin: 'GET /api/admin/summary' },
        async ({ principal }, req, res) => {
          const [summary, days] = await Promise.all([admin.getSummary(ctx), userAdmin.signInsPerDay(ctx, 30)]);
          html(res, 200, views.renderOverview(frame(req, res, principal, 'overview', c().overview.title), { summary, days }));
        },
      ),

      // Users
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/users',
          summary: 'Console: users',
          permission: 'users:read',
          twin: 'GET /api/users',
          query: usersQuery,
        },
        async ({ query, principal }, req, res) => {
          const status: 'active' | 'inactive' | undefined =
            query.status === 'active' || query.status === 'inactive' ? query.status : undefined;
          const tier = query.tier === 'admin' ? 'admin' : '';
          // Keyset cursors are user ids; anything else (an edited URL) starts from the top.
          const asCursor = (v: string | undefined) => (v && UUID_PATTERN.test(v) ? v : undefined);
          const filter = { search: query.q.trim() || undefined, status, holdingRoles: tier ? ADMIN_TIER : undefined };
          const [found, count] = await Promise.all([
            userAdmin.findUsers(ctx, { ...filter, cursor: asCursor(query.cursor), before: asCursor(query.before), limit: USERS_PAGE }),
            userAdmin.countFoundUsers(ctx, filter),
          ]);
          const link = (extra: Record<string, string>) =>
            `/admin/users?${new URLSearchParams({ ...Object.fromEntries(Object.entries({ q: query.q, status: status ?? '', tier }).filter(([, v]) => v)), ...extra })}`;
          html(
            res,
            200,
            views.renderUsers(frame(req, res, principal, 'users', c().users.title), {
              users: found.users,
              count,
              filter: { q: query.q, status: status ?? '', tier },
              prev: found.prevCursor ? link({ before: found.prevCursor }) : undefined,
              next: found.nextCursor ? link({ cursor: found.nextCursor }) : undefined,
            }),
          );
        },
      ),
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/users/:userId',
          summary: 'Console: a user',
          permission: 'users:read',
          twin: 'GET /api/users/:userId',
          params: userIdParams,
        },
        async ({ params, principal }, req, res) => {
          const data = await userDetailPage(principal, params.userId);
          html(res, 200, views.renderUserDetail(frame(req, res, principal, 'users', data.user.email), data));
        },
      ),
      route(
        {
          ...post,
          path: '/users/:userId/profile',
          summary: 'Console: edit a user',
          permission: 'users:write',
          twin: 'PUT /api/users/:userId',
          params: userIdParams,
          body: z.object({ first_name: text(300), last_name: text(300), email: text(300), email_verified: text(10) }),
        },
        async ({ params, body, principal }, req, res) => {
          const current = await users.getUserDetail(ctx, params.userId);
          // Only what changed is sent, so that an unchanged email never needs the §8 take-over rights.
          const patch: Record<string, unknown> = {};
          if (body.first_name !== current.user.firstName) patch.first_name = body.first_name;
          if (body.last_name !== current.user.lastName) patch.last_name = body.last_name;
          if (body.email.trim().toLowerCase() !== current.user.email) patch.email = body.email;
          if ((body.email_verified === 'true') !== current.user.emailVerified) patch.email_verified = body.email_verified === 'true';
          if (Object.keys(patch).length === 0) {
            setFlash(res, config, 'ok', c().common.nothingChanged);
            return res.redirect(303, userBase(params.userId));
          }
          const parsed = updateUserBody.safeParse(patch);
          const again = async (errors: FieldErrors, status = 400) => {
            const data = await userDetailPage(principal, params.userId, errors, body);
            html(res, status, views.renderUserDetail(frame(req, res, principal, 'users', data.user.email), data));
          };
          if (!parsed.success) return again(fieldErrors(parsed.error.issues));
          try {
            await users.updateUser(ctx, principal, params.userId, parsed.data);
          } catch (err) {
            const refusal = refusalOf(err);
            if (refusal === undefined) throw err;
            return again({ email: refusal }, err instanceof AppError ? err.status : 400);
          }
          setFlash(res, config, 'ok', c().user.profileSaved);
          res.redirect(303, userBase(params.userId));
        },
      ),
      route(
        // CONTRACT §8: re-activation needs users:delete, like deactivation (the API's PUT checks it in the service).
        {
          ...post,
          path: '/users/:userId/activate',
          summary: 'Console: re-activate a user',
          permission: 'users:delete',
          twin: 'DELETE /api/users/:userId',
          params: userIdParams,
        },
        async ({ params, principal }, _req, res) =>
          act(config, res, userBase(params.userId), async () => {
            await users.updateUser(ctx, principal, params.userId, { isActive: true });
            return c().user.reactivated;
          }),
      ),
      route(
        {
          ...post,
          path: '/users/:userId/roles',
          summary: 'Console: assign a role',
          permission: 'users:manage_roles',
          twin: 'POST /api/users/:userId/roles',
          params: userIdParams,
          body: z.object({ role_id: text(100) }),
        },
        async ({ params, body, principal }, _req, res) =>
          act(config, res, userBase(params.userId), async () => {
            const roleId = z.uuid().safeParse(body.role_id);
            if (!roleId.success) throw new PageRefusal(c().errors.chooseRole);
            const result = await assignments.assignUserRole(ctx, principal, params.userId, { roleId: roleId.data });
            const role = await catalogue.roleOr404(ctx.db, roleId.data);
            return result.assigned ? c().user.roleAssigned(role.name) : c().user.roleAlreadyHeld(role.name);
          }),
      ),
      route(
        {
          ...post,
          path: '/users/:userId/roles/:roleId/remove',
          summary: 'Console: remove a role',
          permission: 'users:manage_roles',
          twin: 'DELETE /api/users/:userId/roles/:roleId',
          params: userRoleParams,
          body: confirmBody,
        },
        async ({ params, body, principal }, req, res) => {
          if (body.confirm !== 'yes') {
            const [{ user }, role] = await Promise.all([
              users.getUserDetail(ctx, params.userId),
              catalogue.roleOr404(ctx.db, params.roleId),
            ]);
            return html(
              res,
              200,
              views.renderConfirm(frame(req, res, principal, 'users', c().user.removeRoleTitle(role.name, user.email)), {
                message: c().user.removeRoleText,
                action: `/admin/users/${user.id}/roles/${role.id}/remove`,
                button: c().user.removeRoleButton,
                cancel: userBase(user.id),
              }),
            );
          }
          await act(config, res, userBase(params.userId), async () => {
            await assignments.removeUserRole(ctx, principal, params.userId, params.roleId);
            return c().user.roleRemoved;
          });
        },
      ),
      route(
        {
          ...post,
          path: '/users/:userId/mfa/reset',
          summary: "Console: reset a user's second factors",
          permission: 'users:write',
          twin: 'DELETE /api/users/:userId/mfa',
          params: userIdParams,
          body: confirmBody,
        },
        async ({ params, body, principal }, req, res) => {
          if (body.confirm !== 'yes') {
            const { user } = await users.getUserDetail(ctx, params.userId);
            return html(
              res,
              200,
              views.renderConfirm(frame(req, res, principal, 'users', c().user.resetTitle(user.email)), {
                message: c().user.resetText,
                action: `/admin/users/${user.id}/mfa/reset`,
                button: c().user.resetFactors,
                cancel: userBase(user.id),
              }),
            );
          }
          await act(config, res, userBase(params.userId), async () => {
            const { removed } = await userAdmin.resetFactorsOfUser(ctx, principal, params.userId);
            return removed ? c().user.factorsReset : c().user.noFactor;
          });
        },
      ),

      // Audit log
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/audit',
          summary: 'Console: audit log',
          permission: 'system:manage_users',
          twin: 'GET /api/admin/audit-events',
          query: auditForm,
        },
        async ({ query, principal }, req, res) => {
          const parsed = parseAuditFilter(query, AUDIT_PAGE);
          const f = frame(req, res, principal, 'audit', c().audit.title);
          const filterValues = { type: query.type, actor: query.actor, subject: query.subject, from: query.from, to: query.to };
          const filterQuery = new URLSearchParams(Object.entries(filterValues).filter(([, v]) => v));
          const base = { filter: filterValues, types: SECURITY_EVENT_TYPES, csv: `/admin/audit.csv?${filterQuery}` };
          if (!parsed.success)
            return html(res, 400, views.renderAudit(f, { ...base, events: [], errors: fieldErrors(parsed.error.issues) }));
          let page;
          let count;
          try {
            [page, count] = await Promise.all([audit.searchAuditEvents(ctx, parsed.data), audit.countAuditEvents(ctx, parsed.data)]);
          } catch (err) {
            const refusal = refusalOf(err);
            if (refusal === undefined) throw err;
            return html(res, 400, views.renderAudit(f, { ...base, events: [], errors: { from: refusal } }));
          }
          const with_ = (extra: Record<string, string>) =>
            `/admin/audit?${new URLSearchParams({ ...Object.fromEntries(filterQuery), ...extra })}`;
          const paged = query.cursor !== undefined || query.before !== undefined;
          html(
            res,
            200,
            views.renderAudit(f, {
              ...base,
              events: page.events,
              count,
              errors: {},
              next: page.nextCursor ? with_({ cursor: page.nextCursor }) : undefined,
              prev: page.prevCursor ? with_({ before: page.prevCursor }) : paged ? with_({}) : undefined,
            }),
          );
        },
      ),
      route(
        {
          ...CONSOLE,
          method: 'get',
          path: '/audit.csv',
          summary: 'Console: audit log as CSV',
          permission: 'system:manage_users',
          twin: 'GET /api/admin/audit-events',
          query: auditForm,
          response: { description: 'text/csv', kind: 'html' },
        },
        async ({ query, principal }, req, res) => {
          const parsed = parseAuditFilter({ ...query, cursor: undefined, before: undefined }, AUDIT_PAGE);
          // Refused before the first byte of CSV (a filter PostgreSQL would refuse mid-stream reset the connection):
          // the audit page again, 400, naming the field.
          if (!parsed.success) {
            const filter = { type: query.type, actor: query.actor, subject: query.subject, from: query.from, to: query.to };
            return html(
              res,
              400,
              views.renderAudit(frame(req, res, principal, 'audit', c().audit.title), {
                filter,
                types: SECURITY_EVENT_TYPES,
                csv: `/admin/audit.csv?${new URLSearchParams(Object.entries(filter).filter(([, v]) => v))}`,
                events: [],
                errors: fieldErrors(parsed.error.issues),
              }),
            );
          }
          res.status(200).type('text/csv; charset=utf-8').set('Content-Disposition', 'attachment; filename="audit-events.csv"');
          // Streamed batch by batch (keyset, one short query each): memory holds one batch, whatever the trail holds.
          // A slow reader holds the next query back (the socket's buffer must drain first); a closed one ends it.
          // The response closing before it ended: the download was cancelled.
          let closed = false;
          res.once('close', () => (closed = true));
          const send = async (chunk: string) => {
            if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
          };
          await send(`${CSV_HEADER.join(',')}\r\n`);
          for await (const batch of audit.exportAuditEvents(ctx, parsed.data)) {
            if (closed || res.destroyed) break;
            await send(batch.map((e) => `${csvRow(e).map(csvCell).join(',')}\r\n`).join(''));
          }
          res.end();
        },
      ),

      // Signing keys: the API has no route for them (the CLI rotates): reading is the spec's "admin", rotating super_admin.
      route(
        { ...CONSOLE, method: 'get', path: '/signing-keys', summary: 'Console: signing keys', admin: true },
        async ({ principal }, req, res) => {
          const keys = await listSigningKeys(ctx);
          html(
            res,
            200,
            views.renderSigningKeys(frame(req, res, principal, 'signing-keys', c().keys.title), {
              keys,
              canRotate: isSuperAdmin(principal),
            }),
          );
        },
      ),
      route(
        { ...post, path: '/signing-keys/rotate', summary: 'Console: rotate the signing key', role: SUPER_ADMIN, body: confirmBody },
        async ({ body, principal }, req, res) => {
          if (body.confirm !== 'yes') {
            return html(
              res,
              200,
              views.renderConfirm(frame(req, res, principal, 'signing-keys', c().keys.rotateTitle), {
                message: c().keys.rotateText,
                action: '/admin/signing-keys/rotate',
                button: c().keys.rotate,
                cancel: '/admin/signing-keys',
              }),
            );
          }
          await act(config, res, '/admin/signing-keys', async () => {
            const { kid } = await rotateSigningKey(ctx);
            return c().keys.rotated(kid);
          });
        },
      ),
    ],
    { tags: ['Console'] },
  );
}

/** The console's audit filters through the API's own query schema (one rule for both). */
function parseAuditFilter(
  query: { type: string; actor: string; subject: string; from: string; to: string; cursor?: string; before?: string },
  limit: number,
) {
  const parsed = auditEventsQuery.safeParse({
    type: query.type || undefined,
    actor: query.actor.trim() || undefined,
    subject: query.subject.trim() || undefined,
    from: isoDay(query.from),
    to: isoDay(query.to, true),
    cursor: query.cursor || undefined,
    limit: String(limit),
  });
  // The console's previous-page cursor has the shape of the API's cursor.
  const before = query.before ? auditEventsQuery.safeParse({ cursor: query.before }) : undefined;
  if (before && !before.success) return { success: false, error: before.error } as const;
  return parsed.success
    ? ({
        success: true,
        data: {
          actor: parsed.data.actor,
          subject: parsed.data.subject,
          types: parsed.data.type,
          from: parsed.data.from,
          to: parsed.data.to,
          cursor: parsed.data.cursor,
          before: before?.data.cursor,
          limit: parsed.data.limit,
        },
      } as const)
    : ({ success: false, error: parsed.error } as const);
}
