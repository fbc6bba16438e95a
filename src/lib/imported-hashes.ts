import { createCipheriv, pbkdf2, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { promisify } from 'node:util';
import { verify as argon2Verify } from '@node-rs/argon2';
import { verify as bcryptVerify } from '@node-rs/bcrypt';

/**
 * Password hashes brought in from other systems (docs/passwords.md, "Moving users in"), verified in their own scheme at
 * the next sign-in and then replaced by this server's bcrypt. Each stored value is self-describing:
 *
 * - bcrypt `$2a$` / `$2b$` / `$2y$` (Auth0, Devise, Laravel): `@node-rs/bcrypt`, the library of our own hashes;
 * - argon2id / argon2i in PHC form `$argon2id$v=19$m=…,t=…,p=…$salt$hash`: `@node-rs/argon2` (the Rust argon2 crate);
 * - scrypt in PHC form `$scrypt$ln=…,r=…,p=…$salt$hash`: `node:crypto` scrypt;
 * - PBKDF2 as Django writes it `pbkdf2_sha256$iterations$salt$hash` (also `pbkdf2_sha1`), or in PHC form
 *   `$pbkdf2-sha256$i=…$salt$hash` (also `-sha1`, `-sha512`; passlib's `$pbkdf2-sha256$29000$…` too): `node:crypto`;
 * - Firebase's modified scrypt, stored as `$firebase-scrypt$ln=…,r=…$salt$separator$signer_key$hash` (standard base64
 *   fields): scrypt of the password with salt + separator (N = 2^mem_cost, r = rounds, p = 1, 64 bytes), whose first
 *   32 bytes are an AES-256-CTR key (zero IV) that encrypts the project's signer key; the result is the hash.
 */
export type ImportedScheme = 'bcrypt' | 'argon2' | 'scrypt' | 'pbkdf2' | 'firebase-scrypt';

function scryptAsync(password: string | Buffer, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));
}
const pbkdf2Async = promisify(pbkdf2);

/**
 * Upper bounds, so that an imported row cannot make a sign-in cost minutes or gigabytes: every sign-in attempt of the
 * account (by anyone who knows its address) runs the verification in the thread pool that also runs everyone's bcrypt,
 * scrypt and DNS. Each bound is well above what the source systems write by default (bcrypt 10-12, argon2id m=19456
 * t=2 or m=65536 t=3 p=4, scrypt ln=14-16 r=8 p=1, PBKDF2 up to 1.2 million iterations with a 64-byte key); one
 * verification at the bounds costs about a second or two on one core.
 */
export const LIMITS = {
  bcryptCost: 14,
  /** KiB (256 MiB), passes, lanes, and memory × passes (1 GiB-pass). */
  argon2MemoryKiB: 262_144,
  argon2Time: 16,
  argon2Parallelism: 16,
  argon2Work: 1_048_576,
  /** Iterations, and iterations × derived blocks (a longer "hash" multiplies the work). */
  pbkdf2Iterations: 4_000_000,
  pbkdf2HashBytes: 64,
  scryptLogN: 20,
  scryptR: 32,
  scryptP: 16,
  scryptMemoryBytes: 256 * 1024 * 1024,
  /** N × r × p (ln 14, r 8, p 16 or ln 17, r 8, p 2). */
  scryptWork: 2 ** 21,
};

/** What node:crypto (OpenSSL) accepts and our bounds allow: N < 2^(16 r) (RFC 7914), memory and work. */
function scryptProblem(logN: number, r: number, p: number): string | undefined {
  const n = 2 ** logN;
  if (logN >= 16 * r) return `scrypt needs N < 2^(16 r) (RFC 7914): ln ${logN} is too large for r ${r}`;
  if (128 * r * (n + p + 2) > LIMITS.scryptMemoryBytes) return `scrypt parameters need more than ${LIMITS.scryptMemoryBytes / 2 ** 20} MiB`;
  if (n * r * p > LIMITS.scryptWork) return `scrypt parameters out of range (N × r × p at most 2^${Math.log2(LIMITS.scryptWork)})`;
  return undefined;
}

/** PHC and passlib base64: standard or "adapted" (`.` for `+`), padding optional. */
function b64(text: string): Buffer | undefined {
  const normal = text.replace(/\./g, '+');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(normal) || normal.length === 0) return undefined;
  return Buffer.from(normal, 'base64');
}

const PBKDF2_DIGESTS: Record<string, { digest: string; length: number }> = {
  sha1: { digest: 'sha1', length: 20 },
  sha256: { digest: 'sha256', length: 32 },
  sha512: { digest: 'sha512', length: 64 },
};

type Parsed =
  | { scheme: 'bcrypt' }
  | { scheme: 'argon2' }
  | { scheme: 'scrypt'; logN: number; r: number; p: number; salt: Buffer; hash: Buffer }
  | { scheme: 'pbkdf2'; digest: string; iterations: number; salt: Buffer; hash: Buffer }
  | { scheme: 'firebase-scrypt'; logN: number; r: number; salt: Buffer; separator: Buffer; signerKey: Buffer; hash: Buffer };

function intOf(text: string | undefined): number | undefined {
  return text !== undefined && /^\d{1,9}$/.test(text) ? Number(text) : undefined;
}

/** `ln=14,r=8,p=1` → { ln: '14', r: '8', p: '1' } */
function paramsOf(text: string): Record<string, string> {
  return Object.fromEntries(
    text.split(',').map((kv) => {
      const [key = '', value = ''] = kv.split('=');
      return [key, value];
    }),
  );
}

function parse(stored: string): Parsed | { problem: string } {
  const bcrypt = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/.exec(stored);
  if (bcrypt) {
    const cost = Number(bcrypt[1]);
    return cost >= 4 && cost <= LIMITS.bcryptCost ? { scheme: 'bcrypt' } : { problem: `bcrypt cost must be 4 to ${LIMITS.bcryptCost}` };
  }
  const argon2 = /^\$argon2(?:id|i)\$v=\d+\$m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,10})\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.exec(stored);
  if (argon2) {
    const [m, t, p] = [Number(argon2[1]), Number(argon2[2]), Number(argon2[3])];
    if (m > LIMITS.argon2MemoryKiB || t < 1 || t > LIMITS.argon2Time || p < 1 || p > LIMITS.argon2Parallelism || m * t > LIMITS.argon2Work)
      return {
        problem: `argon2 parameters out of range (m at most ${LIMITS.argon2MemoryKiB} KiB, t 1–${LIMITS.argon2Time}, p 1–${LIMITS.argon2Parallelism}, m × t at most ${LIMITS.argon2Work})`,
      };
    return { scheme: 'argon2' };
  }
  if (stored.startsWith('$argon2d$')) return { problem: 'argon2d is not supported (argon2id and argon2i are)' };
  if (stored.startsWith('$scrypt$')) {
    const [, , params = '', salt = '', hash = ''] = stored.split('$');
    const p = paramsOf(params);
    const logN = intOf(p.ln);
    const r = intOf(p.r);
    const par = intOf(p.p);
    const saltBytes = b64(salt);
    const hashBytes = b64(hash);
    if (logN === undefined || r === undefined || par === undefined || !saltBytes || !hashBytes || hashBytes.length < 16)
      return { problem: 'scrypt hashes look like $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash> (base64)' };
    if (logN < 1 || logN > LIMITS.scryptLogN || r < 1 || r > LIMITS.scryptR || par < 1 || par > LIMITS.scryptP)
      return { problem: `scrypt parameters out of range (ln 1–${LIMITS.scryptLogN}, r 1–${LIMITS.scryptR}, p 1–${LIMITS.scryptP})` };
    const costly = scryptProblem(logN, r, par);
    if (costly) return { problem: costly };
    if (hashBytes.length > LIMITS.pbkdf2HashBytes) return { problem: `the scrypt hash is at most ${LIMITS.pbkdf2HashBytes} bytes` };
    return { scheme: 'scrypt', logN, r, p: par, salt: saltBytes, hash: hashBytes };
  }
  const django = /^pbkdf2_(sha1|sha256)\$(\d{1,9})\$([^$]+)\$([A-Za-z0-9+/=]+)$/.exec(stored);
  if (django) {
    const hash = b64(django[4]);
    return pbkdf2Of(django[1], Number(django[2]), Buffer.from(django[3], 'utf8'), hash);
  }
  const phc = /^\$pbkdf2-(sha1|sha256|sha512)\$(?:i=)?(\d{1,9})(?:,l=\d+)?\$([A-Za-z0-9+/.=]+)\$([A-Za-z0-9+/.=]+)$/.exec(stored);
  if (phc) return pbkdf2Of(phc[1], Number(phc[2]), b64(phc[3]), b64(phc[4]));
  if (stored.startsWith('$firebase-scrypt$')) {
    const [, , params = '', salt = '', separator = '', signerKey = '', hash = ''] = stored.split('$');
    const p = paramsOf(params);
    const logN = intOf(p.ln);
    const r = intOf(p.r);
    const [saltBytes, signerKeyBytes, hashBytes] = [b64(salt), b64(signerKey), b64(hash)];
    if (
      logN === undefined ||
      r === undefined ||
      !saltBytes ||
      !signerKeyBytes ||
      !hashBytes ||
      logN < 1 ||
      logN > LIMITS.scryptLogN ||
      r < 1 ||
      r > LIMITS.scryptR
    )
      return { problem: 'not a Firebase scrypt hash' };
    const costly = scryptProblem(logN, r, 1);
    if (costly) return { problem: `Firebase hash_config: ${costly}` };
    return {
      scheme: 'firebase-scrypt',
      logN,
      r,
      salt: saltBytes,
      separator: Buffer.from(separator, 'base64'),
      signerKey: signerKeyBytes,
      hash: hashBytes,
    };
  }
  return { problem: 'unknown hash format: bcrypt, argon2id/argon2i (PHC), scrypt (PHC), PBKDF2 (Django or PHC) or Firebase scrypt' };
}

function pbkdf2Of(name: string, iterations: number, salt: Buffer | undefined, hash: Buffer | undefined): Parsed | { problem: string } {
  const digest = PBKDF2_DIGESTS[name];
  if (!salt || !hash || hash.length < 16) return { problem: 'PBKDF2 hashes need a salt and a base64 hash' };
  if (hash.length > LIMITS.pbkdf2HashBytes) return { problem: `the PBKDF2 hash is at most ${LIMITS.pbkdf2HashBytes} bytes` };
  // Each block of the derived key costs all the iterations again.
  const blocks = Math.ceil(hash.length / digest.length);
  if (iterations < 1 || iterations * blocks > LIMITS.pbkdf2Iterations)
    return { problem: `PBKDF2 iterations must be 1 to ${LIMITS.pbkdf2Iterations} (divided by the key's ${blocks} block(s))` };
  return { scheme: 'pbkdf2', digest: digest.digest, iterations, salt, hash };
}

/** Why a stored value is not a hash this server can verify, or undefined when it is one. */
export function importedHashProblem(stored: string): string | undefined {
  const parsed = parse(stored);
  return 'problem' in parsed ? parsed.problem : undefined;
}

export function schemeOf(stored: string): ImportedScheme | undefined {
  const parsed = parse(stored);
  return 'problem' in parsed ? undefined : parsed.scheme;
}

/** A Firebase export row as the self-describing value stored for it (see the module comment). */
export function firebaseScryptHash(input: {
  passwordHash: string;
  salt: string;
  signerKey: string;
  saltSeparator: string;
  rounds: number;
  memCost: number;
}): string {
  return `$firebase-scrypt$ln=${input.memCost},r=${input.rounds}$${input.salt}$${input.saltSeparator}$${input.signerKey}$${input.passwordHash}`;
}

function equal(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Verifies `password` against an imported hash in its own scheme (false for anything unparseable). */
export async function verifyImportedHash(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if ('problem' in parsed) return false;
  switch (parsed.scheme) {
    case 'bcrypt':
      return bcryptVerify(password, stored);
    case 'argon2':
      return argon2Verify(stored, password);
    case 'scrypt': {
      const N = 2 ** parsed.logN;
      const derived = await scryptAsync(password, parsed.salt, parsed.hash.length, {
        N,
        r: parsed.r,
        p: parsed.p,
        maxmem: LIMITS.scryptMemoryBytes,
      });
      return equal(derived, parsed.hash);
    }
    case 'pbkdf2': {
      const derived = await pbkdf2Async(password, parsed.salt, parsed.iterations, parsed.hash.length, parsed.digest);
      return equal(derived, parsed.hash);
    }
    case 'firebase-scrypt': {
      const key = await scryptAsync(password, Buffer.concat([parsed.salt, parsed.separator]), 64, {
        N: 2 ** parsed.logN,
        r: parsed.r,
        p: 1,
        maxmem: LIMITS.scryptMemoryBytes,
      });
      const cipher = createCipheriv('aes-256-ctr', key.subarray(0, 32), Buffer.alloc(16, 0));
      const derived = Buffer.concat([cipher.update(parsed.signerKey), cipher.final()]);
      return equal(derived, parsed.hash);
    }
  }
}

/** Whether a stored hash is this server's own (bcrypt `$2b$`): anything else is replaced at the next sign-in. */
export function isOwnHash(stored: string): boolean {
  return stored.startsWith('$2b$');
}
