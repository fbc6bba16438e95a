import { acquireDataDirLock, DataDirLockedError, type LockRole } from '../../src/lib/data-dir-lock';

/**
 * A contender for DATA_DIR's lock: `node --import tsx lock-contender.ts DATA_DIR [ROLE] [hold]`. Prints "ready",
 * waits for a line on stdin (a test releases several contenders at once), tries to take the lock as ROLE (default
 * server), prints "acquired" or "locked <holder pid>". A taken lock is held for a moment so that the others meet it,
 * or with `hold` until the next line on stdin (what a race of several uses: the moment is no bound on how late a
 * starved contender tries); then released.
 */
const [dataDir, role = 'server', mode] = process.argv.slice(2);
process.stdout.write('ready\n');
process.stdin.once('data', () => {
  try {
    const lock = acquireDataDirLock(dataDir, role as LockRole);
    process.stdout.write('acquired\n');
    const done = () => {
      lock.release();
      process.exit(0);
    };
    if (mode === 'hold') process.stdin.once('data', done);
    else setTimeout(done, 1500);
  } catch (err) {
    if (!(err instanceof DataDirLockedError)) throw err;
    process.stdout.write(`locked ${err.holder.pid}\n`);
    process.exit(0);
  }
});
