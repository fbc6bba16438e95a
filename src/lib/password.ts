import { hash as bcryptHash, verify as bcryptVerify } from '@node-rs/bcrypt';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { verifyImportedHash } from './imported-hashes';

const BCRYPT = /^\$2[aby]\$/;

/** bcrypt reads at most 72 bytes; longer passwords are refused rather than silently truncated. */
export const PASSWORD_MAX_BYTES = 72;
export const PASSWORD_MIN_LENGTH = 6;

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string | null | undefined): Promise<boolean>;
  /**
   * Resolves at once while fewer hashes run than there are cores for them; while every one is taken, when one frees
   * or after `maxWaitMs`, whichever comes first. Background work that would take a core from a sign-in (webhook
   * attempts) waits on it first, so a burst of it does not double a sign-in's time, and cannot be starved by a storm.
   */
  unsaturated(maxWaitMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * bcrypt ($2b$, the format bcryptjs wrote: existing hashes keep working) in native code on libuv's thread pool, off
 * the event loop (CONTRACT §4: a login storm never stalls). At most one hash per core runs at a time and the rest
 * wait their turn: more would not finish sooner, and would take CPU time from the event loop (every other request)
 * and threads from the pool (file and DNS work).
 */
export function createPasswordHasher(rounds: number, concurrency = Math.max(1, os.availableParallelism())): PasswordHasher {
  const { limit, unsaturated } = createLimiter(concurrency);
  // A valid hash of a random string at the configured cost: comparing against it costs the same as a real
  // comparison, so an unknown email answers in the same time as a wrong password.
  let dummyHash: Promise<string> | undefined;
  const hash = (password: string) => limit(() => bcryptHash(password, rounds));
  return {
    hash,
    async verify(password, storedHash) {
      if (!storedHash) {
        dummyHash ??= hash(randomBytes(16).toString('base64url'));
        const dummy = await dummyHash;
        await limit(() => bcryptVerify(password, dummy));
        return false;
      }
      // A hash brought in by an import (docs/passwords.md) is verified in its own scheme; the caller then replaces it.
      if (!BCRYPT.test(storedHash)) return limit(() => verifyImportedHash(password, storedHash));
      return limit(() => bcryptVerify(password, storedHash));
    },
    unsaturated,
    async close() {
      // Nothing held: the native work runs on libuv's shared pool.
    },
  };
}

/**
 * Runs at most `max` tasks at a time, the others in arrival order; `unsaturated` waits (at most its bound) while all
 * `max` run.
 */
function createLimiter(max: number): {
  limit: <T>(task: () => Promise<T>) => Promise<T>;
  unsaturated: (maxWaitMs: number) => Promise<void>;
} {
  let running = 0;
  const waiting: Array<() => void> = [];
  const freed = new Set<() => void>();
  // A finishing task hands its slot to the next waiting one, if any; else the slot is free, and whoever waits for
  // one (unsaturated) goes on.
  const release = () => {
    const next = waiting.shift();
    if (next) return next();
    running--;
    for (const go of [...freed]) go();
  };
  return {
    limit: async <T>(task: () => Promise<T>): Promise<T> => {
      if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
      else running++;
      try {
        return await task();
      } finally {
        release();
      }
    },
    unsaturated: (maxWaitMs) => {
      if (running < max) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const go = () => {
          clearTimeout(timer);
          freed.delete(go);
          resolve();
        };
        const timer = setTimeout(go, maxWaitMs);
        timer.unref();
        freed.add(go);
      });
    },
  };
}
