import type { DbOrTrx } from '..';
import { UUID_PATTERN } from '../../lib/ids';
import { date, dateOrNull, flag, same, type RecordOf, type RowOf } from '../rows';
import { table } from '../table';

export const userIdentities = table('user_identities', {
  id: same<string>(),
  userId: same<string>(),
  providerId: same<string>(),
  /** The provider's issuer (oidc) or base URL (github) when the identity was linked: part of its key (CONTRACT §23). */
  issuer: same<string>(),
  subject: same<string>(),
  email: same<string | null>(),
  createdAt: date,
  lastUsedAt: dateOrNull,
  /**
   * Linked to an administrator's account under the rules before the fourth review (migration
   * 20261130100000_flag_privileged_identities): it signs nobody in until the owner keeps it from /account.
   */
  needsConfirmation: flag,
});
export type UserIdentityRow = RowOf<typeof userIdentities.columns>;

/** A linked identity with its provider's slug and name (the /account list and GET /api/auth/identities). */
export interface LinkedIdentity extends UserIdentityRow {
  providerSlug: string;
  providerName: string;
}

/** The identity key of CONTRACT §23: (provider, issuer or GitHub base URL, subject). */
export interface IdentityKey {
  providerId: string;
  issuer: string;
  subject: string;
}

/** The columns of an identity key. */
const keyOf = (key: IdentityKey) => ({ provider_id: key.providerId, issuer: key.issuer, subject: key.subject });

/** The identity (provider, issuer, subject), stamped as used now; undefined when nobody has linked it. */
export const useIdentity = (db: DbOrTrx, key: IdentityKey, now: Date) => userIdentities.update(db, keyOf(key), { last_used_at: now });

/** The identity (provider, issuer, subject) without stamping it (the policy asks who holds it). */
export const findIdentity = (db: DbOrTrx, key: IdentityKey) => userIdentities.find(db, keyOf(key));

/**
 * Links (provider, issuer, subject) to a user. Returns undefined when that identity is already linked (to anyone): the unique
 * constraint decides, so two concurrent callbacks cannot link one identity twice.
 */
export async function insertIdentity(
  db: DbOrTrx,
  identity: IdentityKey & { id: string; userId: string; email: string | null; now: Date },
): Promise<UserIdentityRow | undefined> {
  const [row] = await db('user_identities')
    .insert({
      id: identity.id,
      user_id: identity.userId,
      provider_id: identity.providerId,
      issuer: identity.issuer,
      subject: identity.subject,
      email: identity.email,
      created_at: identity.now,
      last_used_at: identity.now,
    })
    .onConflict(['provider_id', 'issuer', 'subject'])
    .ignore()
    .returning('*');
  return row ? userIdentities.toRow(row) : undefined;
}

export async function listIdentitiesOfUser(db: DbOrTrx, userId: string): Promise<LinkedIdentity[]> {
  const rows = await db('user_identities as i')
    .join('identity_providers as p', 'p.id', 'i.provider_id')
    .where('i.user_id', userId)
    .orderBy('i.created_at')
    .select('i.*', 'p.slug as provider_slug', 'p.name as provider_name');
  return rows.map((r: RecordOf<typeof userIdentities.columns> & { provider_slug: string; provider_name: string }) => ({
    ...userIdentities.toRow(r),
    providerSlug: r.provider_slug,
    providerName: r.provider_name,
  }));
}

/** The owner keeps a flagged identity: it signs in again. Returns it, or undefined when it is not theirs or not flagged. */
export const confirmIdentityOfUser = async (db: DbOrTrx, userId: string, id: string) =>
  UUID_PATTERN.test(id)
    ? userIdentities.update(db, { id, user_id: userId, needs_confirmation: true }, { needs_confirmation: false })
    : undefined;

export async function deleteIdentityOfUser(db: DbOrTrx, userId: string, id: string): Promise<UserIdentityRow | undefined> {
  if (!UUID_PATTERN.test(id)) return undefined;
  const [row] = await db('user_identities').where({ id, user_id: userId }).delete().returning('*');
  return row ? userIdentities.toRow(row) : undefined;
}

/**
 * CONTRACT §23: a take-back removes every identity linked to the account (a linked identity is a way to sign in).
 * Returns what went, with the provider's slug and name, for the audit rows and the mail. The caller holds the users
 * row lock.
 */
export async function deleteIdentitiesOfUser(db: DbOrTrx, userId: string): Promise<LinkedIdentity[]> {
  const linked = await listIdentitiesOfUser(db, userId);
  if (linked.length === 0) return [];
  await db('user_identities')
    .whereIn(
      'id',
      linked.map((i) => i.id),
    )
    .delete();
  return linked;
}
