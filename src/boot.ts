/**
 * The production entry, `dist/src/server.js` (scripts/bundle.js copies this file's build there, beside the bundled server
 * `server.bundle.js`): it runs the bundle with a V8 code cache, so that a start does not parse and compile again what
 * the last start compiled (issue 33, start within 1 s: about a quarter less CPU per start, docs/performance.md).
 *
 * - The cache is `server.bundle.cache` beside the bundle: the SHA-1 of the bundle's bytes, then V8's cached data. A
 *   cache of another bundle, or one V8 rejects (another Node version or other V8 flags), is not used, and is written
 *   again once the server listens.
 * - It is written once the server listens (the `service-sso:listening` diagnostics channel, published by server.ts), so
 *   it holds every function a start compiled; written to a temporary file, then renamed: a concurrent start reads the
 *   old cache or the new one, never half of one. Only where the server may write beside its bundle (a read-only image:
 *   no cache, the start is as without one). Never in a shared directory: cached data is code.
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
import { LISTENING_CHANNEL } from './lib/listening';
import { loadPostgresDriver } from './lib/postgres-driver';

const bundle = path.join(__dirname, 'server.bundle.js');
const cacheFile = path.join(__dirname, 'server.bundle.cache');
const DIGEST_BYTES = 20;

function run(): void {
  tuneHeap();
  if (process.sourceMapsEnabled) {
    require(bundle);
    return;
  }
  const bytes = fs.readFileSync(bundle);
  const digest = createHash('sha1').update(bytes).digest();
  const cached = readCache(digest);
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${bytes.toString('latin1')}\n})`, {
    filename: bundle,
    cachedData: cached,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (cached === undefined || script.cachedDataRejected === true) {
    const write = () => {
      unsubscribe(LISTENING_CHANNEL, write);
      setImmediate(() => writeCache(digest, script.createCachedData()));
    };
    subscribe(LISTENING_CHANNEL, write);
  }
  const compiled: unknown = script.runInThisContext();
  if (typeof compiled !== 'function') throw new Error('the server bundle did not compile to its module function');
  const requireFromBundle = createRequire(bundle);
  loadPostgresDriver(requireFromBundle);
  const module = { exports: {}, id: bundle, filename: bundle, loaded: false, children: [], paths: [] };
  compiled.call(module.exports, module.exports, requireFromBundle, module, bundle, __dirname);
}

/** The cached data of this bundle, or undefined (none, unreadable, or another bundle's). */
function readCache(digest: Buffer): Buffer | undefined {
  let data: Buffer;
  try {
    data = fs.readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  return data.length > DIGEST_BYTES && data.subarray(0, DIGEST_BYTES).equals(digest) ? data.subarray(DIGEST_BYTES) : undefined;
}

function writeCache(digest: Buffer, data: Buffer): void {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, Buffer.concat([digest, data]), { mode: 0o600 });
    fs.renameSync(temporary, cacheFile);
  } catch {
    // Not writable (a read-only image): every start compiles, as without a cache.
    fs.rmSync(temporary, { force: true });
  }
}

run();
