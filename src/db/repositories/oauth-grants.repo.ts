import type { DbOrTrx } from '..';
import { lastUseStaleBefore, touchLastUse } from '../last-use';
import { convert, date, dateOrNull, named, same, type RecordOf, type RowOf } from '../rows';
import { table } from '../table';

/** A user's approval of a client (a connected app). */
export const oauthGrants = table('oauth_grants', {
  userId: same<string>(),
  clientId: same<string>(),
  scopes: named(
    'scope',
    convert((scope: string) => scope.split(' ').filter(Boolean)),
  ),
  /** CONTRACT §23: the API resources (RFC 8707 identifiers) the person consented to (jsonb, parsed by pg). */
  resources: same<string[]>(),
  /** CONTRACT §23: the redirect URIs the person consented to (a self-registered client is bound to them). */
  redirectUris: same<string[]>(),
  grantedAt: date,
  lastUsedAt: dateOrNull,
});
export type GrantRow = RowOf<typeof oauthGrants.columns>;

export interface GrantWithClientRow extends GrantRow {
  clientName: string;
}

export const findGrant = (db: DbOrTrx, userId: string, clientId: string) => oauthGrants.find(db, { user_id: userId, client_id: clientId });

/**
 * Creates the grant, or replaces what it covers (the caller passes the union with what was there, read in the same
 * transaction); granted_at keeps the first approval.
 */
export async function upsertGrant(
  db: DbOrTrx,
  g: { userId: string; clientId: string; scopes: string[]; resources: string[]; redirectUris: string[]; now: Date },
): Promise<void> {
  await db('oauth_grants')
    .insert({
      user_id: g.userId,
      client_id: g.clientId,
      scope: g.scopes.join(' '),
      resources: JSON.stringify(g.resources),
      redirect_uris: JSON.stringify(g.redirectUris),
      granted_at: g.now,
    })
    .onConflict(['user_id', 'client_id'])
    .merge(['scope', 'resources', 'redirect_uris']);
}

export async function listGrantsOfUser(db: DbOrTrx, userId: string): Promise<GrantWithClientRow[]> {
  const rows = await db('oauth_grants as g')
    .join('oauth_clients as c', 'c.client_id', 'g.client_id')
    .where('g.user_id', userId)
    .orderBy('g.granted_at', 'desc')
    .select(
      'g.user_id',
      'g.client_id',
      'g.scope',
      'g.resources',
      'g.redirect_uris',
      'g.granted_at',
      'g.last_used_at',
      'c.name as client_name',
    );
  return rows.map((r: RecordOf<typeof oauthGrants.columns> & { client_name: string }) => ({
    ...oauthGrants.toRow(r),
    clientName: r.client_name,
  }));
}

/** Returns whether a grant was there to delete. */
export const deleteGrant = async (db: DbOrTrx, userId: string, clientId: string) =>
  (await oauthGrants.delete(db, { user_id: userId, client_id: clientId })) > 0;

/** The connected app's last use, written at most once a minute (db/last-use.ts): a recent one is left as it is. */
export async function touchGrant(db: DbOrTrx, userId: string, clientId: string, now: Date): Promise<void> {
  await touchLastUse(db, 'oauth_grants', { user_id: userId, client_id: clientId }, now);
}

/** The same, found through the OAuth session a refresh token belongs to (one statement). */
export async function touchGrantOfSession(db: DbOrTrx, sessionId: string, now: Date): Promise<void> {
  await db.raw(
    `update oauth_grants g set last_used_at = ?
       from sessions s
      where s.id = ? and g.user_id = s.user_id and g.client_id = s.client_id
        and (g.last_used_at is null or g.last_used_at < ?)`,
    [now, sessionId, lastUseStaleBefore(now)],
  );
}
