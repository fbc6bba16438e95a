import { acquireDataDirLock, DataDirLockedError } from '../../src/lib/data-dir-lock';

/**
 * One contender of test/integration/data-dir-lock.test.ts: `node --import tsx lock-contender.ts DATA_DIR`. Prints
 * "ready", waits for a line on stdin (the test releases every contender at once), tries to take DATA_DIR's lock, prints
 * "acquired" or "locked <holder pid>", holds a taken lock for a moment so the others meet it, releases it and exits.
 */
const dataDir = process.argv[2];
process.stdout.write('ready\n');
process.stdin.once('data', () => {
  try {
    const lock = acquireDataDirLock(dataDir, 'server');
    process.stdout.write('acquired\n');
    setTimeout(() => {
      lock.release();
      process.exit(0);
    }, 1500);
  } catch (err) {
    if (!(err instanceof DataDirLockedError)) throw err;
    process.stdout.write(`locked ${err.holder.pid}\n`);
    process.exit(0);
  }
});
