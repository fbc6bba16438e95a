import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE, readLockHolder } from '../../src/lib/data-dir-lock';
import { ROOT } from '../helpers/processes';

/**
 * DATA_DIR's lock (src/lib/data-dir-lock.ts) with real processes released at the same instant: exactly one of them
 * takes it, on a fresh directory and over a stale lock left by a process that is gone; the others are told who holds
 * it. In-process: release, update and the stale cases.
 */
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-lock-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * `n` contender processes, each ready and waiting; then all released at once. A winner holds the lock until
 * every contender has answered, so a contender starved of CPU for a while still meets it instead of taking it after
 * the release; then the winners are told to release it. Resolves with every one's answer.
 */
async function race(n: number): Promise<{ pid: number; answer: string }[]> {
  const procs: ChildProcess[] = [];
  const outputs: string[] = [];
  const ready: Promise<void>[] = [];
  const answered: Promise<void>[] = [];
  const done: Promise<void>[] = [];
  const answerOf = (i: number) => outputs[i].replace('ready\n', '').trim();
  for (let i = 0; i < n; i++) {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/lock-contender.ts', dir], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    procs.push(proc);
    outputs.push('');
    const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
    ready.push(
      new Promise((resolve) => {
        proc.stdout!.on('data', (d) => {
          outputs[i] += d;
          if (outputs[i].includes('ready\n')) resolve();
        });
      }),
    );
    answered.push(
      Promise.race([
        exited,
        new Promise<void>((resolve) => {
          proc.stdout!.on('data', () => {
            if (/^ready\n.+\n/.test(outputs[i])) resolve();
          });
        }),
      ]),
    );
    done.push(exited);
  }
  await Promise.all(ready);
  for (const proc of procs) proc.stdin!.write('go\n');
  await Promise.all(answered);
  procs.forEach((proc, i) => {
    if (answerOf(i) === 'acquired') proc.stdin!.write('release\n');
  });
  await Promise.all(done);
  return procs.map((proc, i) => ({ pid: proc.pid!, answer: answerOf(i) }));
}

function expectOneWinner(results: { pid: number; answer: string }[]): void {
  const winners = results.filter((r) => r.answer === 'acquired');
  expect(winners).toHaveLength(1);
  for (const loser of results.filter((r) => r !== winners[0])) expect(loser.answer).toBe(`locked ${winners[0].pid}`);
  expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
}

test('processes starting at the same instant on a fresh DATA_DIR: exactly one takes the lock', async () => {
  expectOneWinner(await race(6));
}, 60_000);

test('processes starting at the same instant over a stale lock: exactly one takes it over', async () => {
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: Number(gone.stdout), role: 'server', databasePort: 1 }));
  expectOneWinner(await race(6));
}, 60_000);

test('a held lock names its holder; update records the database port; release frees it', () => {
  const lock = acquireDataDirLock(dir, 'cli');
  const holder = JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')) as { pid: number; role: string };
  expect(holder).toMatchObject({ pid: process.pid, role: 'cli' });
  lock.update({ databasePort: 5555 });
  const updated = JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')) as unknown;
  expect(updated).toMatchObject({ pid: process.pid, role: 'cli', databasePort: 5555 });
  // This very process counts as gone (a container restarted with the same pid): readLockHolder sees no live holder.
  expect(readLockHolder(dir)).toBeUndefined();
  lock.release();
  expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
  lock.release();
});

test('a live holder is refused with its pid and role; an unreadable lock is taken over', () => {
  const parent = process.ppid;
  fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: parent, role: 'server', databasePort: 4321 }));
  expect(readLockHolder(dir)).toMatchObject({ pid: parent, role: 'server', databasePort: 4321 });
  let error: unknown;
  try {
    acquireDataDirLock(dir, 'cli');
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(DataDirLockedError);
  expect((error as DataDirLockedError).message).toBe(`the embedded database in ${dir} is in use by process ${parent} (server)`);

  fs.writeFileSync(path.join(dir, LOCK_FILE), '{"pid":');
  const lock = acquireDataDirLock(dir, 'server');
  expect(JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid, role: 'server' });
  lock.release();
  expect(fs.readdirSync(dir)).toEqual([]);
});
