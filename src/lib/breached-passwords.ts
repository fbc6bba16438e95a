import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

/**
 * The shipped list of breached passwords (docs/passwords.md): the 100,000 passwords found most often in Have I Been
 * Pwned's Pwned Passwords, as compiled by the UK National Cyber Security Centre and distributed in SecLists
 * (`Passwords/Common-Credentials/100k-most-used-passwords-NCSC.txt`, MIT licence), stored unchanged and gzipped in
 * `assets/` (about 430 KB on disk).
 *
 * Loaded on first use, never at start. In memory it is a sorted array of the first 8 bytes of each password's SHA-256
 * (800 KB for 100,000 entries, no strings kept), searched by bisection: a false match needs a 64-bit collision with one
 * of 100,000 entries (odds about 1 in 10^14).
 */
export const BREACHED_LIST_FILE = 'breached-passwords-ncsc-100k.txt.gz';

let loaded: BigUint64Array | undefined;

/** The asset's path: `assets/` at the package root (src/lib in development, dist/src in the bundle, dist/assets in a build). */
export function breachedListPath(): string {
  for (let dir = __dirname, i = 0; i < 6; i++, dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'assets', BREACHED_LIST_FILE);
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error(`the breached-password list assets/${BREACHED_LIST_FILE} is missing from the package`);
}

function fingerprint(password: string): bigint {
  return createHash('sha256').update(password, 'utf8').digest().readBigUInt64BE(0);
}

function load(): BigUint64Array {
  if (loaded) return loaded;
  const text = gunzipSync(fs.readFileSync(breachedListPath())).toString('utf8');
  const lines = text.split('\n');
  const out = new BigUint64Array(lines.length);
  let n = 0;
  for (const line of lines) {
    const password = line.replace(/\r$/, '');
    if (password) out[n++] = fingerprint(password);
  }
  loaded = out.subarray(0, n).sort();
  return loaded;
}

/** How many passwords the shipped list holds (docs and tests). */
export function breachedListSize(): number {
  return load().length;
}

/** Whether `password` is on the shipped list, exactly (case matters, as in the breaches). */
export function isCommonBreachedPassword(password: string): boolean {
  const list = load();
  const needle = fingerprint(password);
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const value = list[mid];
    if (value === needle) return true;
    if (value < needle) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
