import { acquireDataDirLock, DataDirLockedError, type LockRole } from '../../src/lib/data-dir-lock';

/**
 * A contender for DATA_DIR's lock: `node --import tsx lock-contender.ts DATA_DIR [ROLE]`. Prints "ready", waits for a
 * line on stdin (a test releases several contenders at once), tries to take the lock as ROLE (default server), prints
 * "acquired" or "locked <holder pid>". A taken lock is held until the next line on stdin, then released: the test
 * says when every other contender has tried (a fixed hold would be no bound on how late a starved contender tries).
 */
const [dataDir, role = 'server'] = process.argv.slice(2);
process.stdout.write('ready\n');
process.stdin.once('data', () => {
  try {
    const lock = acquireDataDirLock(dataDir, role as LockRole);
    process.stdout.write('acquired\n');
    process.stdin.once('data', () => {
      lock.release();
      process.exit(0);
    });
  } catch (err) {
    if (!(err instanceof DataDirLockedError)) throw err;
    process.stdout.write(`locked ${err.holder.pid}\n`);
    process.exit(0);
  }
});
