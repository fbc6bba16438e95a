import type { Knex } from 'knex';
import type { DbOrTrx } from '..';

export type EmailTokenPurpose = 'verify_email' | 'set_password';

const PURPOSES: readonly EmailTokenPurpose[] = ['verify_email', 'set_password'];

/** The purpose column (text) as the union; the repository writes no other value. */
function toPurpose(value: string): EmailTokenPurpose {
  const purpose = PURPOSES.find((p) => p === value);
  if (!purpose) throw new Error(`email_tokens: unknown purpose ${value}`);
  return purpose;
}

/** The columns of a mail's recipient. */
interface RecipientColumns {
  id: string;
  email: string;
  first_name: string;
}

/** A live (unused, unexpired) link of an active user, with the address it was sent to. */
export interface EmailLinkRow {
  userId: string;
  email: string;
  purpose: EmailTokenPurpose;
  expiresAt: Date;
}

export interface LinkRecipient {
  id: string;
  email: string;
  firstName: string;
}

/**
 * Looks up the recipient of a mail sent to `:email` and stores what is sent to it, in ONE statement: a known and an
 * unknown address cost the same single round trip (no timing oracle). The recipient `u` is the active account of
 * `:email` when `recipient.condition` holds for it and `recipient.earlier` (a count over the account's earlier
 * requests, correlated on `users.id`) is below `:max`; `writes` are the statement's further CTEs, the last of them
 * `ins`, which inserts for `u` and returns its `user_id`. Returns the recipient, or undefined.
 */
export async function insertForRecipient(
  db: DbOrTrx,
  recipient: { condition: string; earlier: string },
  writes: string,
  bindings: Record<string, Knex.Value>,
): Promise<LinkRecipient | undefined> {
  const result = await db.raw<{ rows: RecipientColumns[] }>(
    `with u as (
       select id, email, first_name from users
        where email = :email and is_active and ${recipient.condition} and (${recipient.earlier}) < :max
     ), ${writes}
     select u.id, u.email, u.first_name from u join ins on ins.user_id = u.id`,
    bindings,
  );
  const [row] = result.rows;
  return row ? { id: row.id, email: row.email, firstName: row.first_name } : undefined;
}

export async function insertEmailToken(
  db: DbOrTrx,
  t: { tokenHash: string; userId: string; purpose: EmailTokenPurpose; now: Date; expiresAt: Date },
): Promise<void> {
  await db('email_tokens').insert({
    token_hash: t.tokenHash,
    user_id: t.userId,
    purpose: t.purpose,
    created_at: t.now,
    expires_at: t.expiresAt,
  });
}

/**
 * Looks up an email address and, when it belongs to an eligible user, stores a link for them, all in ONE
 * statement: a known and an unknown address cost the same single round trip (no timing oracle).
 * Eligible: active, `onlyUnverified` respected, and fewer than `maxPerWindow` links of this purpose created
 * since `windowStart` (so the endpoint cannot be used to flood a mailbox). Returns the recipient, or undefined.
 */
export async function insertEmailTokenForAddress(
  db: DbOrTrx,
  t: {
    email: string;
    tokenHash: string;
    purpose: EmailTokenPurpose;
    now: Date;
    expiresAt: Date;
    onlyUnverified: boolean;
    windowStart: Date;
    maxPerWindow: number;
  },
): Promise<LinkRecipient | undefined> {
  return insertForRecipient(
    db,
    {
      condition: '(not :onlyUnverified or not email_verified)',
      earlier:
        'select count(*) from email_tokens et where et.user_id = users.id and et.purpose = :purpose and et.created_at > :windowStart',
    },
    `ins as (
       insert into email_tokens (token_hash, user_id, purpose, created_at, expires_at)
       select :hash, u.id, :purpose, :now, :expiresAt from u
       returning user_id
     )`,
    {
      email: t.email,
      onlyUnverified: t.onlyUnverified,
      purpose: t.purpose,
      windowStart: t.windowStart,
      max: t.maxPerWindow,
      hash: t.tokenHash,
      now: t.now,
      expiresAt: t.expiresAt,
    },
  );
}

/** Reads a live link without consuming it (spec §3: verify-email leaves the link unchanged). */
export async function findLiveEmailToken(
  db: DbOrTrx,
  tokenHash: string,
  now: Date,
): Promise<(EmailLinkRow & { emailVerified: boolean }) | undefined> {
  const row = await db('email_tokens as et')
    .join('users as u', 'u.id', 'et.user_id')
    .where('et.token_hash', tokenHash)
    .whereNull('et.used_at')
    .where('et.expires_at', '>', now)
    .where('u.is_active', true)
    .first('et.user_id', 'u.email', 'u.email_verified', 'et.purpose', 'et.expires_at');
  return row ? { ...toLinkRow(row), emailVerified: row.email_verified } : undefined;
}

/** The columns of a link with its user's address (findLiveEmailToken, consumeEmailToken). */
interface LinkColumns {
  user_id: string;
  email: string;
  purpose: string;
  expires_at: Date;
}

function toLinkRow(row: LinkColumns): EmailLinkRow {
  return { userId: row.user_id, email: row.email, purpose: toPurpose(row.purpose), expiresAt: new Date(row.expires_at) };
}

/**
 * Burns a live link of one of `purposes` in ONE conditional UPDATE (ARCHITECTURE §6): of N concurrent uses
 * exactly one gets the row back. The user must still be active.
 */
export async function consumeEmailToken(
  db: DbOrTrx,
  tokenHash: string,
  purposes: readonly EmailTokenPurpose[],
  now: Date,
): Promise<EmailLinkRow | undefined> {
  if (purposes.length === 0) return undefined;
  const placeholders = purposes.map(() => '?').join(', ');
  const result = await db.raw<{ rows: LinkColumns[] }>(
    `update email_tokens et set used_at = ?
       from users u
      where et.token_hash = ? and u.id = et.user_id and u.is_active
        and et.purpose in (${placeholders}) and et.used_at is null and et.expires_at > ?
      returning et.user_id, u.email, et.purpose, et.expires_at`,
    [now, tokenHash, ...purposes, now],
  );
  const [row] = result.rows;
  return row ? toLinkRow(row) : undefined;
}

/** Burns every other live link of a user (of the given purposes); returns how many. */
export async function burnEmailTokensOfUser(
  db: DbOrTrx,
  userId: string,
  purposes: readonly EmailTokenPurpose[],
  now: Date,
): Promise<number> {
  return db('email_tokens')
    .where({ user_id: userId })
    .whereIn('purpose', [...purposes])
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ used_at: now });
}
