import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { withTransaction } from '../db';
import { isUniqueViolation } from '../db/pg-errors';
import { findRoleByName, type RoleRow } from '../db/repositories/roles.repo';
import { findTakenEmails, insertImportedUsers, listUsersForExport, type ImportedUser } from '../db/repositories/user-import.repo';
import { AppError, type ErrorDetail } from '../errors';
import { emailAddress } from '../lib/email-address';
import { firebaseScryptHash, importedHashProblem } from '../lib/imported-hashes';
import { NAME_FORBIDDEN, NAME_MAX_CHARACTERS } from '../lib/names';
import { normalizeEmail } from './auth.service';
import type { ServiceContext } from './context';
import type { Principal } from './principal';
import { hasPermission, mayGrantRole } from './rbac-policy';
import { granterOf } from './role-assignment.service';

/** At most this many rows in one import (all or nothing). */
export const MAX_IMPORT_ROWS = 10_000;
/** Accounts per page of the export. */
export const EXPORT_PAGE_SIZE = 1000;

const name = (field: string) =>
  z
    .string({ error: `${field} is required` })
    .trim()
    .min(1, `${field} is required`)
    .refine((v) => [...v].length <= NAME_MAX_CHARACTERS, { message: `${field} is too long (at most ${NAME_MAX_CHARACTERS} characters)` })
    .refine((v) => !NAME_FORBIDDEN.test(v), { message: `${field} must be one line without control characters` });

/** CSV cells are text: "true"/"false" and "a;b" lists are read as JSON's booleans and arrays. */
const csvBoolean = z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v === '' ? undefined : v), z.boolean().optional());
const csvList = z.preprocess(
  (v) =>
    typeof v === 'string'
      ? v
          .split(';')
          .map((s) => s.trim())
          .filter(Boolean)
      : v,
  z.array(z.string().min(1).max(100)).max(50, 'at most 50 roles').optional(),
);
const csvInt = z.preprocess((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v), z.number().int());
const optionalText = z.preprocess((v) => (v === '' ? undefined : v), z.string().max(4096).optional());

/** Firebase's "Password hash parameters" as its console and `auth:export` show them. */
export const firebaseHashConfig = z.object({
  algorithm: z.literal('SCRYPT', { error: 'hash_config.algorithm must be SCRYPT' }),
  base64_signer_key: z.string().min(1).max(1024),
  base64_salt_separator: z.string().max(1024),
  rounds: csvInt.pipe(z.number().int().min(1).max(32)),
  mem_cost: csvInt.pipe(z.number().int().min(1).max(20)),
});

/** One row of an import, as JSON or as a CSV line with the same column names (`hash_config` as JSON text). */
export const importRow = z.object({
  email: z.string({ error: 'email is required' }).trim().pipe(emailAddress),
  first_name: name('first_name'),
  last_name: name('last_name'),
  email_verified: csvBoolean,
  roles: csvList,
  password_hash: optionalText,
  password_salt: optionalText,
  hash_config: z
    .preprocess((v) => {
      if (v === '' || v === undefined) return undefined;
      if (typeof v !== 'string') return v;
      try {
        const parsed: unknown = JSON.parse(v);
        return parsed;
      } catch {
        return v;
      }
    }, firebaseHashConfig.optional())
    .optional(),
});
export type ImportRowInput = z.input<typeof importRow>;

export interface ImportResult {
  imported: number;
  dry_run: boolean;
}

const refuse = (details: ErrorDetail[]) =>
  new AppError('validation_error', `The import was refused: ${details.length} problem(s); nothing was created`, { details });

export { rowsOfCsv } from '../declarations/user-import';

/**
 * POST /api/admin/users/import (docs/passwords.md): every row is checked (shape, duplicates in the file, accounts that
 * exist, roles the caller may grant, hashes this server can verify), then all accounts are created in one transaction,
 * or none with a report of every problem by row. With `dryRun` nothing is written. Passwords keep their imported hash
 * until the next sign-in verifies it in its own scheme and replaces it with bcrypt; rows without a hash have no
 * password (the person uses "Forgot your password?" or sign-in by email).
 */
export async function importUsers(
  ctx: ServiceContext,
  actor: Principal,
  rows: readonly unknown[],
  options: { dryRun: boolean },
): Promise<ImportResult> {
  if (rows.length === 0) throw refuse([{ path: 'body', message: 'no rows to import' }]);
  if (rows.length > MAX_IMPORT_ROWS) {
    throw refuse([{ path: 'body', message: `at most ${MAX_IMPORT_ROWS} rows per import (this one has ${rows.length})` }]);
  }
  const details: ErrorDetail[] = [];
  const users: ImportedUser[] = [];
  const seen = new Map<string, number>();
  const roleCache = new Map<string, RoleRow | undefined>();
  const mayManageRoles = hasPermission(actor, 'users:manage_roles');
  const granter = await granterOf(ctx.db, actor);

  for (const [i, raw] of rows.entries()) {
    const row = i + 1;
    const sentEmail = typeof raw === 'object' && raw !== null && 'email' in raw && typeof raw.email === 'string' ? raw.email : '';
    const problem = (field: string, message: string) => details.push({ path: `rows[${i}].${field}`, row, email: sentEmail, message });
    const parsed = importRow.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problem(issue.path.join('.') || 'row', issue.message);
      continue;
    }
    const data = parsed.data;
    const email = normalizeEmail(data.email);
    const earlier = seen.get(email);
    if (earlier !== undefined) problem('email', `the same address as row ${earlier}`);
    else seen.set(email, row);

    const roleIds: string[] = [];
    if (data.roles && data.roles.length > 0) {
      if (!mayManageRoles) problem('roles', 'assigning roles needs the permission users:manage_roles');
      for (const roleName of data.roles) {
        if (!roleCache.has(roleName)) roleCache.set(roleName, await findRoleByName(ctx.db, roleName, null));
        const role = roleCache.get(roleName);
        if (!role) {
          problem('roles', `no global role is named ${roleName}`);
          continue;
        }
        const verdict = mayGrantRole(granter, role);
        if (!verdict.allowed) problem('roles', verdict.reason);
        else roleIds.push(role.id);
      }
    }

    let passwordHash: string | null = null;
    if (data.hash_config || data.password_salt) {
      if (!data.password_hash || !data.password_salt || !data.hash_config) {
        problem('hash_config', 'a Firebase row needs password_hash, password_salt and hash_config');
      } else {
        passwordHash = firebaseScryptHash({
          passwordHash: data.password_hash,
          salt: data.password_salt,
          signerKey: data.hash_config.base64_signer_key,
          saltSeparator: data.hash_config.base64_salt_separator,
          rounds: data.hash_config.rounds,
          memCost: data.hash_config.mem_cost,
        });
      }
    } else if (data.password_hash) {
      passwordHash = data.password_hash;
    }
    const hashProblem = passwordHash ? importedHashProblem(passwordHash) : undefined;
    if (hashProblem) problem('password_hash', hashProblem);

    users.push({
      id: randomUUID(),
      email,
      firstName: data.first_name,
      lastName: data.last_name,
      emailVerified: data.email_verified ?? false,
      passwordHash,
      roleIds,
    });
  }

  const taken = await findTakenEmails(ctx.db, [...seen.keys()]);
  for (const [email, row] of seen) {
    if (taken.has(email))
      details.push({ path: `rows[${row - 1}].email`, row, email, message: 'an account with this address already exists' });
  }
  if (details.length > 0) throw refuse(details.sort((a, b) => (a.row ?? 0) - (b.row ?? 0)));
  if (options.dryRun) return { imported: 0, dry_run: true };

  const now = ctx.clock.now();
  try {
    await withTransaction(ctx.db, async (trx) => {
      await insertImportedUsers(trx, users, now);
      for (const u of users) {
        // Every way an account comes to exist records user.created (webhook subscribers provision on it).
        await ctx.events.record(trx, {
          type: 'user.created',
          actorId: actor.userId,
          subjectId: u.id,
          detail: { via: 'import', email: u.email, password: u.passwordHash ? 'imported' : 'none' },
        });
      }
    });
  } catch (err) {
    // An account created meanwhile with one of the addresses: the whole import is refused, as the check would have.
    if (isUniqueViolation(err)) throw refuse([{ path: 'body', message: 'an account with one of these addresses was created meanwhile' }]);
    throw err;
  }
  return { imported: users.length, dry_run: false };
}

/** GET /api/admin/users/export: one page of accounts (never a hash, factor, code, key or token). */
export async function exportUsersPage(ctx: ServiceContext, afterId: string | null) {
  const users = await listUsersForExport(ctx.db, afterId, EXPORT_PAGE_SIZE + 1);
  const next = users.length > EXPORT_PAGE_SIZE ? users[EXPORT_PAGE_SIZE - 1].id : undefined;
  return { users: users.slice(0, EXPORT_PAGE_SIZE), next };
}
