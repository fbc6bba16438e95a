/**
 * The production entry, `dist/src/server.js` (scripts/bundle.js copies this file's build there, beside the bundled server
 * `server.bundle.js`): it runs the bundle with a V8 code cache, so that a start does not parse and compile again what
 * the last start compiled (issue 33, start within 1 s: about a quarter less CPU per start, docs/performance.md).
 *
 * - The cache is `server.bundle.cache` beside the bundle: the SHA-1 of the bundle's bytes, the SHA-256 of V8's data,
 *   then the data. A cache of another bundle, a damaged one, one not owned by this user or writable by others, or one
 *   V8 rejects (another Node version or other V8 flags) is not used, and is written again once the server listens.
 * - It is written once the server listens (the `service-sso:listening` diagnostics channel, published by server.ts), so
 *   it holds every function a start compiled; written to a temporary file, then renamed: a concurrent start reads the
 *   old cache or the new one, never half of one. Only where the server may write beside its bundle (a read-only image:
 *   no cache, the start is as without one). Never in a shared directory: cached data is code.
 * - The "listening" log line says what this start found (`codeCache`: used, none, refused, rejected;
 *   lib/listening.ts). The temporary files of processes killed between write and rename are removed at the next write.
 * - `--enable-source-maps` (docs/operations.md): the bundle is loaded as a plain module, since Node maps the stack
 *   traces of modules it loads itself.
 * - The heap growth of lib/heap-tuning.ts is set before compiling: V8 accepts cached data only under the flags it was
 *   made with, and the server sets that flag again in main() (the same value: no change).
 * - PostgreSQL's driver is loaded first, without Node's `Response` in sight (loadPostgresDriver).
 */
import { createHash } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { tuneHeap } from './lib/heap-tuning';
import { LISTENING_CHANNEL, type Listening } from './lib/listening';
import { loadPostgresDriver } from './lib/postgres-driver';

const bundle = path.join(__dirname, 'server.bundle.js');
const cacheFile = path.join(__dirname, 'server.bundle.cache');
/** The cache file: the bundle's SHA-1, then the SHA-256 of V8's data, then the data. */
const BUNDLE_DIGEST = 20;
const DATA_DIGEST = 32;
const HEADER = BUNDLE_DIGEST + DATA_DIGEST;

function run(): void {
  tuneHeap();
  const requireFromBundle = createRequire(bundle);
  loadPostgresDriver(requireFromBundle);
  // Node before 20.12 has no main-context loader for a script's dynamic import(): the bundle runs as a plain module.
  const mainContextLoader: typeof vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER | undefined = vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  if (process.sourceMapsEnabled === true || mainContextLoader === undefined) {
    requireFromBundle(bundle);
    return;
  }
  const bytes = fs.readFileSync(bundle);
  const digest = createHash('sha1').update(bytes).digest();
  const found = readCache(digest);
  const cached = typeof found === 'string' ? undefined : found;
  // The wrapper on a line of its own, the bundle's first line counted as line 1: stack traces keep the bundle's own
  // lines and columns (what its source map is read with).
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {\n${bytes.toString('latin1')}\n})`, {
    filename: bundle,
    lineOffset: -1,
    cachedData: cached,
    importModuleDynamically: mainContextLoader,
  });
  const codeCache: Listening['codeCache'] = typeof found === 'string' ? found : script.cachedDataRejected === true ? 'rejected' : 'used';
  const listening = (message: unknown) => {
    unsubscribe(LISTENING_CHANNEL, listening);
    if (isListening(message)) message.codeCache = codeCache;
    if (codeCache !== 'used') setImmediate(() => writeCache(digest, script.createCachedData()));
  };
  subscribe(LISTENING_CHANNEL, listening);
  const compiled: unknown = script.runInThisContext();
  if (typeof compiled !== 'function') throw new Error('the server bundle did not compile to its module function');
  const module = { exports: {}, id: bundle, filename: bundle, loaded: false, children: [], paths: [] };
  compiled.call(module.exports, module.exports, requireFromBundle, module, bundle, __dirname);
}

/**
 * The cached data of this bundle; `none` when there is no cache file; `refused` when it is not a regular file of this
 * process's user that only it may write (the data is code: V8 in a release build does not checksum it, and damaged
 * data can crash or miscompile), is another bundle's, or its data's SHA-256 does not match (a torn or damaged file).
 */
function readCache(digest: Buffer): Buffer | 'none' | 'refused' {
  let fd: number;
  try {
    fd = fs.openSync(cacheFile, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    return err instanceof Error && 'code' in err && err.code === 'ENOENT' ? 'none' : 'refused';
  }
  try {
    const stat = fs.fstatSync(fd);
    const owner = process.geteuid?.();
    if (!stat.isFile() || (owner !== undefined && stat.uid !== owner) || (stat.mode & 0o022) !== 0) return 'refused';
    const file = fs.readFileSync(fd);
    if (file.length <= HEADER || !file.subarray(0, BUNDLE_DIGEST).equals(digest)) return 'refused';
    const data = file.subarray(HEADER);
    return createHash('sha256').update(data).digest().equals(file.subarray(BUNDLE_DIGEST, HEADER)) ? data : 'refused';
  } catch {
    return 'refused';
  } finally {
    fs.closeSync(fd);
  }
}

/** The message of the listening channel (an object server.ts publishes). */
function isListening(message: unknown): message is Listening {
  return typeof message === 'object' && message !== null;
}

/**
 * Written to a new temporary file, flushed to disk, then renamed over the cache: a start reads a whole file or none.
 * The temporary files of processes that no longer run (killed between write and rename) are removed first.
 */
function writeCache(digest: Buffer, data: Buffer): void {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  removeAbandoned();
  let fd: number;
  try {
    fd = fs.openSync(temporary, 'wx', 0o600);
  } catch {
    // Not writable (a read-only image, another user's directory): every start compiles, as without a cache.
    return;
  }
  try {
    try {
      fs.writeFileSync(fd, Buffer.concat([digest, createHash('sha256').update(data).digest(), data]));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temporary, cacheFile);
  } catch {
    // A full disk, or the file removed under it: this file, which this process made, goes; the next start writes again.
    try {
      fs.rmSync(temporary, { force: true });
    } catch {
      // already gone
    }
  }
}

/**
 * Removes the `server.bundle.cache.<pid>.tmp` files of processes that are gone, and one of this process's id (left by
 * an earlier process with the same id, e.g. pid 1 in a container: this process has not begun its own yet); another
 * running start's file is left to it. Processes of another pid namespace (a dist/ shared between containers) look
 * gone: their write then fails at its rename and that start writes no cache; nothing half-written is ever read.
 */
function removeAbandoned(): void {
  const prefix = `${path.basename(cacheFile)}.`;
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(cacheFile));
  } catch {
    return;
  }
  for (const name of names) {
    const id = name.startsWith(prefix) && name.endsWith('.tmp') ? name.slice(prefix.length, -'.tmp'.length) : '';
    if (!/^[1-9][0-9]{0,9}$/.test(id)) continue;
    const pid = Number(id);
    if (pid !== process.pid && running(pid)) continue;
    try {
      fs.rmSync(path.join(path.dirname(cacheFile), name), { force: true });
    } catch {
      // not ours to remove
    }
  }
}

/** Whether a process with this id runs (EPERM: it runs as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err instanceof Error && 'code' in err && err.code === 'EPERM';
  }
}

run();
