import type { DbOrTrx } from '..';

export type ChallengePurpose = 'register' | 'login' | 'mfa';

export async function insertChallenge(
  db: DbOrTrx,
  c: { challenge: string; purpose: ChallengePurpose; userId: string | null; now: Date; expiresAt: Date },
): Promise<void> {
  await db('webauthn_challenges').insert({
    challenge: c.challenge,
    purpose: c.purpose,
    user_id: c.userId,
    created_at: c.now,
    expires_at: c.expiresAt,
  });
}

/** Burns the user's unused challenges (registration and second-step ceremonies in flight). */
export async function burnChallengesOfUser(db: DbOrTrx, userId: string, now: Date): Promise<void> {
  await db('webauthn_challenges').where({ user_id: userId }).whereNull('used_at').update({ used_at: now });
}

/**
 * Burns a challenge in ONE conditional UPDATE (single use, short-lived): it must have been issued for this purpose
 * (and this user, when one is given) and be unused and unexpired. Returns whether it was.
 */
export async function consumeChallenge(
  db: DbOrTrx,
  c: { challenge: string; purpose: ChallengePurpose; userId: string | null; now: Date },
): Promise<boolean> {
  const q = db('webauthn_challenges')
    .where({ challenge: c.challenge, purpose: c.purpose })
    .whereNull('used_at')
    .where('expires_at', '>', c.now);
  if (c.userId) q.where({ user_id: c.userId });
  else q.whereNull('user_id');
  const rows = await q.update({ used_at: c.now }).returning('challenge');
  return rows.length === 1;
}
