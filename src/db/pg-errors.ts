import { AppError, conflict, serviceUnavailable } from '../errors';
import { thrownCode, thrownString } from '../lib/thrown';

/** The one place that maps driver errors to AppErrors. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  return thrownCode(err) === '23505' && (!constraint || thrownString(err, 'constraint') === constraint);
}

/** Connection-level failures: the database is down, unreachable or overloaded. */
export function isConnectionError(err: unknown): boolean {
  if (thrownString(err, 'name') === 'KnexTimeoutError') return true;
  const code = thrownCode(err);
  if (code !== undefined && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|57P0[1-3]|08\d{3}|53300)$/.test(code))
    return true;
  // pg's own connect timeout (connectionTimeoutMillis) is a bare Error('timeout expired') without a code: a server that
  // accepts the connection but does not finish the start-up in time, as a loaded machine does under a burst of new
  // connections (issue 33's 5xx soak found it as 500s).
  const message = thrownString(err, 'message');
  return (
    message !== undefined &&
    /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|^timeout expired$/i.test(message)
  );
}

/**
 * serialization_failure (40001) and deadlock_detected (40P01): the transaction lost a race and changed nothing;
 * running it again is safe (CONTRACT §8).
 */
export function isRetryableTransactionError(err: unknown): boolean {
  const code = thrownCode(err);
  return code === '40001' || code === '40P01';
}

/**
 * The database refused work for lack of resources or time, not because of the request: insufficient_resources
 * (class 53: out of memory, disk full, too many connections), query_canceled (57014: a `statement_timeout` an operator
 * set) and lock_not_available (55P03: a `lock_timeout`). Under load these are temporary: 503 with Retry-After, like a
 * lost connection, never a 500.
 */
export function isOverloadError(err: unknown): boolean {
  const code = thrownCode(err);
  return code !== undefined && (/^53\d{3}$/.test(code) || code === '57014' || code === '55P03');
}

/** Maps a database error to what the client should see; unknown errors pass through untouched. */
export function mapDbError(err: unknown, conflictMessage: Parameters<typeof conflict>[0] = 'Already exists'): unknown {
  if (err instanceof AppError) return err;
  if (isUniqueViolation(err)) return conflict(conflictMessage);
  if (isConnectionError(err) || isRetryableTransactionError(err) || isOverloadError(err)) return serviceUnavailable(err);
  const code = thrownCode(err);
  // invalid_text_representation (e.g. a malformed uuid) and friends: the input was bad, not the server.
  // 22021/22P05: a NUL byte or unencodable character in text input.
  if (code === '22P02' || code === '22001' || code === '22003' || code === '22007' || code === '22021' || code === '22P05') {
    return new AppError('validation_error', 'Invalid identifier or value', { cause: err });
  }
  return err;
}
