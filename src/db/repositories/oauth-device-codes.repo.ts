import { preparedRows, type DbOrTrx } from '..';
import { authorizationContextOf, type AuthorizationContext, type AuthorizationContextRecord } from './authorization-context';
import { mappedTable } from '../table';

export type DeviceCodeStatus = 'pending' | 'approved' | 'denied' | 'consumed';

/** A device authorization (RFC 8628), known by the hashes of its device code and user code. */
export interface DeviceCodeRow extends AuthorizationContext {
  deviceCodeHash: string;
  clientId: string;
  status: DeviceCodeStatus;
  userId: string | null;
  intervalSeconds: number;
  expiresAt: Date;
}

export interface DeviceCodeRecord extends AuthorizationContextRecord {
  device_code_hash: string;
  user_code_hash: string;
  session_id: string | null;
  client_id: string;
  status: DeviceCodeStatus;
  user_id: string | null;
  interval_s: number;
  created_at: Date;
  expires_at: Date;
}

function toRow(r: DeviceCodeRecord): DeviceCodeRow {
  return {
    deviceCodeHash: r.device_code_hash,
    clientId: r.client_id,
    ...authorizationContextOf(r),
    status: r.status,
    userId: r.user_id,
    intervalSeconds: Number(r.interval_s),
    expiresAt: new Date(r.expires_at),
  };
}
const deviceCodes = mappedTable('oauth_device_codes', toRow);

/** Inserts a device authorization; false when the user code's hash is taken (the caller draws another code). */
export async function insertDeviceCode(
  db: DbOrTrx,
  d: {
    deviceCodeHash: string;
    userCodeHash: string;
    clientId: string;
    scope: string;
    resource: string | null;
    intervalSeconds: number;
    now: Date;
    expiresAt: Date;
  },
): Promise<boolean> {
  const rows = await db('oauth_device_codes')
    .insert({
      device_code_hash: d.deviceCodeHash,
      user_code_hash: d.userCodeHash,
      client_id: d.clientId,
      scope: d.scope,
      resource: d.resource,
      interval_s: d.intervalSeconds,
      created_at: d.now,
      expires_at: d.expiresAt,
    })
    .onConflict('user_code_hash')
    .ignore()
    .returning('device_code_hash');
  return rows.length === 1;
}

/** The pending, unexpired authorization a user code names; undefined for any other. */
export const findPendingDeviceCode = (db: DbOrTrx, userCodeHash: string, now: Date) =>
  deviceCodes.findLive(db, { user_code_hash: userCodeHash, status: 'pending' }, { now });

/** The client's approved, unexpired device authorization of this device code, read (not polled, not consumed). */
export const findApprovedDeviceCode = (db: DbOrTrx, deviceCodeHash: string, clientId: string, now: Date) =>
  deviceCodes.findLive(db, { device_code_hash: deviceCodeHash, client_id: clientId, status: 'approved' }, { now });

/** The user's answer, in one conditional UPDATE: of two answers to one code, exactly one counts. */
export const decideDeviceCode = (
  db: DbOrTrx,
  userCodeHash: string,
  decision: { approve: boolean; userId: string; authTime: Date; amr: string[] },
  now: Date,
) =>
  deviceCodes.spend(
    db,
    { user_code_hash: userCodeHash, status: 'pending' },
    {
      status: decision.approve ? 'approved' : 'denied',
      user_id: decision.userId,
      auth_time: decision.authTime,
      amr: JSON.stringify(decision.amr),
    },
    { now },
  );

/**
 * One poll of the token endpoint (RFC 8628 §3.5), in one statement: records the poll and, when it came sooner than the
 * interval after the previous one while the user has not answered, lengthens the interval by 5 s (`slowDown`).
 * Only the client the code was issued to finds it.
 */
export async function recordDevicePoll(
  db: DbOrTrx,
  deviceCodeHash: string,
  clientId: string,
  now: Date,
): Promise<(DeviceCodeRow & { slowDown: boolean }) | undefined> {
  const rows = await preparedRows<DeviceCodeRecord & { slow_down: boolean }>(
    db,
    'sso_record_device_poll_1',
    `with old as (
       select device_code_hash, status, interval_s,
              (status = 'pending' and last_polled_at is not null
               and last_polled_at > cast($3 as timestamptz) - make_interval(secs => interval_s)) as too_fast
         from oauth_device_codes where device_code_hash = $1 and client_id = $2 for update)
     update oauth_device_codes d
        set last_polled_at = $3,
            interval_s = case when old.too_fast then old.interval_s + 5 else old.interval_s end
       from old
      where d.device_code_hash = old.device_code_hash
     returning d.device_code_hash, d.client_id, d.scope, d.resource, d.status, d.user_id, d.auth_time, d.amr, d.interval_s,
               d.expires_at, old.too_fast as slow_down`,
    [deviceCodeHash, clientId, now],
  );
  const row = rows[0];
  return row ? { ...toRow(row), slowDown: row.slow_down === true } : undefined;
}

/** The approved code's tokens are issued once: the consuming UPDATE is conditional on `approved` and unexpired. */
export const consumeDeviceCode = (db: DbOrTrx, deviceCodeHash: string, clientId: string, sessionId: string, now: Date) =>
  deviceCodes.spend(
    db,
    { device_code_hash: deviceCodeHash, client_id: clientId, status: 'approved' },
    { status: 'consumed', session_id: sessionId },
    { now },
  );

/**
 * Counts one wrong-code attempt of a browser session against `limit` per `windowSeconds`, in one statement, BEFORE the
 * code is looked up: parallel guesses are serialised on the row. Returns false when the budget is spent (nothing is
 * counted then). A correct code gives its attempt back with releaseDeviceCodeAttempt.
 */
export async function takeDeviceCodeAttempt(
  db: DbOrTrx,
  sessionId: string,
  now: Date,
  limit: number,
  windowSeconds: number,
): Promise<boolean> {
  const rows = await preparedRows(
    db,
    'sso_take_device_code_attempt_1',
    `insert into device_code_failures (session_id, failures, window_start) values ($1, 1, $2)
     on conflict (session_id) do update set
       failures = case when device_code_failures.window_start <= cast($2 as timestamptz) - make_interval(secs => $4)
                       then 1 else device_code_failures.failures + 1 end,
       window_start = case when device_code_failures.window_start <= cast($2 as timestamptz) - make_interval(secs => $4)
                           then excluded.window_start else device_code_failures.window_start end
     where device_code_failures.window_start <= cast($2 as timestamptz) - make_interval(secs => $4)
        or device_code_failures.failures < $3
     returning failures`,
    [sessionId, now, limit, windowSeconds],
  );
  return rows.length === 1;
}

export async function releaseDeviceCodeAttempt(db: DbOrTrx, sessionId: string): Promise<void> {
  await db('device_code_failures').where({ session_id: sessionId }).where('failures', '>', 0).decrement('failures', 1);
}
