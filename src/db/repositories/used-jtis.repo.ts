import { createHash } from 'node:crypto';
import type { DbOrTrx } from '..';

/**
 * Single-use identifiers (issue 34): a private_key_jwt assertion's `jti` per client, a DPoP proof's `jti` per key.
 * Spending one is one insert on the primary key, so of concurrent uses exactly one is accepted; the row lives until
 * the identifier could no longer be accepted anyway (`expires_at`), then the prune job deletes it.
 */
export type JtiKind = 'client_assertion' | 'dpop_proof';

function keyOf(kind: JtiKind, scope: string, jti: string): string {
  return createHash('sha256').update(`${kind}\u0000${scope}\u0000${jti}`).digest('hex');
}

/** True when this use is the first (the identifier is now spent); false when it was spent before. */
export async function spendJti(db: DbOrTrx, kind: JtiKind, scope: string, jti: string, expiresAt: Date): Promise<boolean> {
  const result = await db.raw<{ rows: unknown[] }>(
    'insert into oauth_used_jtis (key, expires_at) values (?, ?) on conflict (key) do nothing returning key',
    [keyOf(kind, scope, jti), expiresAt],
  );
  return result.rows.length === 1;
}
