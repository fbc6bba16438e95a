import { hash as bcryptHash, verify as bcryptVerify } from '@node-rs/bcrypt';
import { randomBytes } from 'node:crypto';

/** bcrypt reads at most 72 bytes; longer passwords are refused rather than silently truncated. */
export const PASSWORD_MAX_BYTES = 72;
export const PASSWORD_MIN_LENGTH = 6;

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string | null | undefined): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * bcrypt ($2b$, the format bcryptjs wrote: existing hashes keep working) in native code on libuv's thread pool, off
 * the event loop (CONTRACT §4: a login storm never stalls). No worker threads to start or keep in memory; the pool
 * has UV_THREADPOOL_SIZE threads (default 4), so hashing uses up to four cores.
 */
export function createPasswordHasher(rounds: number): PasswordHasher {
  // A valid hash of a random string at the configured cost: comparing against it costs the same as a real
  // comparison, so an unknown email answers in the same time as a wrong password.
  let dummyHash: Promise<string> | undefined;
  const hash = (password: string) => bcryptHash(password, rounds);
  return {
    hash,
    async verify(password, storedHash) {
      if (!storedHash) {
        dummyHash ??= hash(randomBytes(16).toString('base64url'));
        await bcryptVerify(password, await dummyHash);
        return false;
      }
      return bcryptVerify(password, storedHash);
    },
    async close() {
      // Nothing held: the native work runs on libuv's shared pool.
    },
  };
}
