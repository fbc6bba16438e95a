import { preparedRows, type DbOrTrx } from '..';
import { lastUseStaleBefore } from '../last-use';

export interface PrincipalRole {
  id: string;
  name: string;
  application: string | null;
}

export interface PrincipalRecord {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  isActive: boolean;
  emailVerified: boolean;
  /** Active roles, global and application-scoped. */
  roles: PrincipalRole[];
  /** Permissions granted by active global roles; every permission for a global super_admin. */
  permissions: string[];
  /** How the session's user authenticated (sessions.amr, CONTRACT §10). */
  amr: string[];
}

/**
 * THE rule of which roles an account holds (CONTRACT §20), declared once: the rows (role_id, group_id) of user `uid`
 * (a SQL parameter such as `:uid`, `$2` or `?`): each role assigned to it (group_id null), and each role a SCIM group
 * it is a member of is mapped to (group_id = that group), never the global super_admin through a group. Deactivated
 * roles are included; the live permission lookup below keeps the active ones, while the take-over and linking rules
 * count a role that reactivating would hand back (roles.repo.ts listRolesHeldByUser).
 */
export function heldRolesSql(uid: string): string {
  return `select ur.role_id, null::uuid as group_id
         from user_roles ur
        where ur.user_id = ${uid}
       union all
       select gr.role_id, gm.group_id
         from scim_group_members gm
         join scim_group_roles gr on gr.group_id = gm.group_id
         join roles gro on gro.id = gr.role_id
        where gm.user_id = ${uid} and not (gro.name = 'super_admin' and gro.application is null)`;
}

/**
 * The active roles of user :uid as CTE `r` (held by the rule of heldRolesSql: live, so a membership or mapping change
 * counts from the next request), and the columns that resolve them: every role, and the permissions of the active
 * GLOBAL roles (application-scoped roles never grant this server's permissions); a global super_admin holds the whole
 * catalogue.
 */
const ROLES_CTE = `held as (
       ${heldRolesSql(':uid')}
     ), r as (
       select distinct ro.id, ro.name, ro.application
         from held join roles ro on ro.id = held.role_id
        where ro.is_active
     )`;
export const ACCESS_COLUMNS = `coalesce((select json_agg(json_build_object('id', r.id, 'name', r.name, 'application', r.application)
                                      order by r.application nulls first, r.name) from r), '[]'::json) as roles,
            case when exists (select 1 from r where r.name = 'super_admin' and r.application is null)
                 then coalesce((select json_agg(p.name order by p.name) from permissions p), '[]'::json)
                 else coalesce((select json_agg(distinct rp.permission order by rp.permission)
                                  from role_permissions rp join r on r.id = rp.role_id
                                 where r.application is null), '[]'::json)
            end as permissions`;

/**
 * CONTRACT §8: an OAuth session whose client was deactivated is not live, whatever happened to the session row.
 * The SQL condition on the sessions row aliased `session` (the client's row is read, not locked), shared by the
 * live check, the one-statement refresh rotation and the rotation's transactional path.
 */
export function sessionClientIsActive(session: string): string {
  return `(${session}.client_id is null
          or exists (select 1 from oauth_clients oc where oc.client_id = ${session}.client_id and oc.is_active))`;
}

/**
 * The live check behind every authenticated request, in ONE round trip (CONTRACT §3): the session is active,
 * the user is active, and their current roles and permissions. Also refreshes the session's last_used_at at
 * most once a minute. Returns undefined when the session or user is not active.
 */
export async function loadPrincipal(db: DbOrTrx, sessionId: string, userId: string, now: Date): Promise<PrincipalRecord | undefined> {
  const stale = lastUseStaleBefore(now);
  const [row] = await preparedRows<PrincipalColumns>(db, 'sso_load_principal_5', LOAD_PRINCIPAL_SQL, [sessionId, userId, now, stale]);
  return row ? toPrincipalRecord(row) : undefined;
}

/** What ACCESS_COLUMNS selects: json from pg (its text from drivers that do not parse json). */
export interface AccessColumns {
  roles: PrincipalRole[] | string;
  permissions: string[] | string;
}

/** What PRINCIPAL_COLUMNS selects. */
export interface PrincipalColumns extends AccessColumns {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  is_active: boolean;
  email_verified: boolean;
  amr: string[] | string | null;
}

/** A row with PRINCIPAL_COLUMNS (users `u`, sessions `s`, roles CTE `r`) as a PrincipalRecord. */
export function toPrincipalRecord(row: PrincipalColumns): PrincipalRecord {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    isActive: row.is_active,
    emailVerified: row.email_verified,
    roles: parseJson(row.roles),
    permissions: parseJson(row.permissions),
    amr: parseTextArray(row.amr),
  };
}

/** The principal's columns, from users `u`, sessions `s` (amr) and the roles CTE of `rolesCte(userParam)`. */
export const PRINCIPAL_COLUMNS = `u.id, u.email, u.first_name, u.last_name, u.is_active, u.email_verified, s.amr,
            ${ACCESS_COLUMNS}`;

/** The roles CTE `r` for the user id in the given $n parameter. */
export function rolesCte(userParam: string): string {
  return ROLES_CTE.replaceAll(':uid', userParam);
}

/** loadPrincipal's statement ($1 session id, $2 user id, $3 now, $4 the last_used_at older than which it is touched). */
const LOAD_PRINCIPAL_SQL = `with s as (
       select se.id, se.user_id, se.amr from sessions se
        where se.id = $1 and se.user_id = $2 and se.revoked_at is null and se.expires_at > $3
          and ${sessionClientIsActive('se')}
     ), touch as (
       update sessions set last_used_at = $3
        where id = (select id from s) and last_used_at < $4
     ), ${rolesCte('$2')}
     select ${PRINCIPAL_COLUMNS}
       from users u join s on s.user_id = u.id
      where u.is_active`;

/** The same role and permission resolution for any user, without a session (user detail, check-permission). */
export async function loadUserAccess(db: DbOrTrx, userId: string): Promise<{ roles: PrincipalRole[]; permissions: string[] }> {
  const result = await db.raw<{ rows: AccessColumns[] }>(
    `with ${ROLES_CTE}
     select ${ACCESS_COLUMNS}`,
    { uid: userId },
  );
  return toUserAccess(result.rows[0]);
}

/** A row with ACCESS_COLUMNS as the user's roles and permissions. */
export function toUserAccess(row: AccessColumns): { roles: PrincipalRole[]; permissions: string[] } {
  return { roles: parseJson(row.roles), permissions: parseJson(row.permissions) };
}

function parseJson<T>(value: T | string): T {
  return typeof value === 'string' ? JSON.parse(value) : value;
}

/** A text[] column: an array from pg, the literal `{a,b}` from drivers that do not parse arrays. */
export function parseTextArray(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === 'string')
    return value
      .replace(/^\{|\}$/g, '')
      .split(',')
      .filter(Boolean);
  return [];
}
