import { createHash } from 'node:crypto';
import { thrownField } from './thrown';

/** How long the range API may take before the check fails open (docs/passwords.md). */
export const PWNED_RANGE_TIMEOUT_MS = 2000;

export type PwnedRangeAnswer = { found: boolean } | { unavailable: string };

/**
 * Have I Been Pwned's Pwned Passwords range API by k-anonymity: only the first 5 hex characters of the password's
 * SHA-1 leave the server; the answer lists every suffix of that prefix (`SUFFIX:COUNT` lines, padded with count-0
 * entries when `Add-Padding` is asked for, which we do so that the answer's size tells an observer nothing), and the
 * match is made here. Any failure (timeout, network, a non-200) is `unavailable`: the caller fails open.
 */
export async function checkPwnedRange(
  baseUrl: string,
  password: string,
  timeoutMs: number = PWNED_RANGE_TIMEOUT_MS,
): Promise<PwnedRangeAnswer> {
  const sha1 = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
  const prefix = sha1.slice(0, 5);
  const suffix = sha1.slice(5);
  try {
    const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/range/${prefix}`, {
      headers: { 'Add-Padding': 'true', 'User-Agent': 'service-sso password policy' },
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (res.status !== 200) return { unavailable: `status ${res.status}` };
    const body = await res.text();
    for (const line of body.split('\n')) {
      const [candidate, count] = line.trim().split(':');
      if (candidate?.toUpperCase() === suffix && Number(count) > 0) return { found: true };
    }
    return { found: false };
  } catch (err) {
    // A timeout is a DOMException (TimeoutError), not always an instance of this realm's Error.
    const name = thrownField(err, 'name');
    const message = thrownField(err, 'message');
    return { unavailable: `${String(name ?? 'Error')}: ${String(message ?? 'unknown error')}` };
  }
}
