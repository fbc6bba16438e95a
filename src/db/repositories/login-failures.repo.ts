import { preparedRows, type DbOrTrx } from '..';

export interface LoginThrottlePolicy {
  /** Consecutive failures that lock the address. */
  threshold: number;
  baseLockSeconds: number;
  maxLockSeconds: number;
}

/**
 * Counts a login attempt for an address in one atomic statement, before the password is compared: parallel
 * guesses are serialised on the row, so none slips past the limit. The attempt that reaches the threshold
 * sets the lock (1 min, doubling per further failure up to the maximum); a success clears the row.
 * Returns `{ allowed: false, lockedUntil }` when the address is locked now, else the failures counted so far
 * (this attempt included: `failures >= threshold` means a failure now locks the address).
 */
/**
 * CONTRACT §8: however many failures pile up, the arithmetic stays in range. The counter stops at FAILURES_CAP
 * (far below integer overflow) and the doubling exponent at EXPONENT_CAP (2^30 * base is far above any
 * maxLockSeconds, and far below double-precision overflow at 2^1024), so the lock just stays at its maximum.
 */
const FAILURES_CAP = 1_000_000;
const EXPONENT_CAP = 30;

export async function countLoginAttempt(
  db: DbOrTrx,
  email: string,
  now: Date,
  policy: LoginThrottlePolicy,
): Promise<{ allowed: true; failures: number } | { allowed: false; lockedUntil: Date }> {
  const [counted] = await preparedRows<{ failures: number }>(
    db,
    'sso_count_login_attempt_1',
    `insert into login_failures (email, failures, updated_at) values ($1, 1, $2)
     on conflict (email) do update set
       failures = least(login_failures.failures + 1, ${FAILURES_CAP}),
       locked_until = case when login_failures.failures + 1 >= $3
         then cast($2 as timestamptz) + make_interval(secs => least($4, $5 * power(2, least(login_failures.failures + 1 - $3, ${EXPONENT_CAP}))))
         else null end,
       updated_at = excluded.updated_at
     where login_failures.locked_until is null or login_failures.locked_until <= $2
     returning failures`,
    [email, now, policy.threshold, policy.maxLockSeconds, policy.baseLockSeconds],
  );
  if (counted) return { allowed: true, failures: Number(counted.failures) };
  const row = await db('login_failures').where({ email }).first('locked_until');
  return { allowed: false, lockedUntil: row?.locked_until ? new Date(row.locked_until) : now };
}

export async function clearLoginFailures(db: DbOrTrx, email: string): Promise<void> {
  await db('login_failures').where({ email }).delete();
}

/**
 * Takes back the attempt counted for a password that turned out right but only opens the second step (CONTRACT
 * §10): it is not a failure, yet the failures earned by wrong codes must stay. The attempt was allowed, so any lock
 * on the row now was set by that attempt reaching the threshold: it goes too.
 */
export async function releaseLoginAttempt(db: DbOrTrx, email: string): Promise<void> {
  await db('login_failures')
    .where({ email })
    .update({ failures: db.raw('greatest(failures - 1, 0)'), locked_until: null });
}
