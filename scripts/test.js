'use strict';
/**
 * `npm test`: the type check (`tsc --noEmit`) and jest side by side. Jest's workers spend much of their time waiting
 * (PostgreSQL, Chromium, timers), so the type check, at a lower CPU priority, fills those waits instead of running
 * first on its own. Both must pass: a type error stops jest at once and fails the run; otherwise the run ends with
 * jest's status, or the type check's if jest passed and it did not. Arguments go to jest (`npm test -- test/e2e/x`).
 */
const { spawn } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const tscBin = require.resolve('typescript/bin/tsc', { paths: [root] });
const jestBin = require.resolve('jest/bin/jest', { paths: [root] });

const tsc = spawn(process.execPath, [tscBin, '--noEmit'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
try {
  os.setPriority(tsc.pid, 10);
} catch {
  // Not allowed here: the type check runs at the same priority.
}
let tscOutput = '';
tsc.stdout.on('data', (d) => (tscOutput += d));
tsc.stderr.on('data', (d) => (tscOutput += d));

const jest = spawn(process.execPath, [jestBin, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });

const tscDone = new Promise((resolve) => tsc.on('close', (code) => resolve(code ?? 1)));
let jestRunning = true;
const jestDone = new Promise((resolve) =>
  jest.on('close', (code, signal) => {
    jestRunning = false;
    resolve(code ?? (signal ? 1 : 0));
  }),
);

tscDone.then((code) => {
  if (code === 0) return;
  process.stderr.write(`\nThe type check (tsc --noEmit) failed${jestRunning ? '; jest is stopped' : ''}:\n${tscOutput}\n`);
  if (jestRunning) jest.kill('SIGTERM');
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    tsc.kill(signal);
    jest.kill(signal);
  });
}

Promise.all([tscDone, jestDone]).then(([tscCode, jestCode]) => {
  if (tscCode === 0) process.stdout.write('The type check (tsc --noEmit) passed.\n');
  process.exit(tscCode !== 0 ? 1 : jestCode);
});
