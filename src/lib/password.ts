import os from 'node:os';
import path from 'node:path';
import { Piscina } from 'piscina';

/** bcrypt reads at most 72 bytes; longer passwords are refused rather than silently truncated. */
export const PASSWORD_MAX_BYTES = 72;
export const PASSWORD_MIN_LENGTH = 6;

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string | null | undefined): Promise<boolean>;
  close(): Promise<void>;
}

/** bcryptjs in a worker_threads pool sized to the CPU count (CONTRACT §4: a login storm never stalls). */
export function createPasswordHasher(rounds: number): PasswordHasher {
  const pool = new Piscina({
    filename: path.join(__dirname, 'password.worker.js'),
    maxThreads: Math.max(1, os.availableParallelism?.() ?? os.cpus().length),
    minThreads: 1,
    idleTimeout: 30_000,
  });
  // A valid hash of a random string at the configured cost: comparing against it costs the same as a real
  // comparison, so an unknown email answers in the same time as a wrong password.
  let dummyHash: Promise<string> | undefined;
  const hash = (password: string) => pool.run({ op: 'hash', password, rounds }) as Promise<string>;
  return {
    hash,
    async verify(password, storedHash) {
      if (!storedHash) {
        dummyHash ??= hash(`dummy-${Math.random()}`);
        await pool.run({ op: 'compare', password, hash: await dummyHash });
        return false;
      }
      return (await pool.run({ op: 'compare', password, hash: storedHash })) as boolean;
    },
    async close() {
      await pool.destroy();
    },
  };
}
