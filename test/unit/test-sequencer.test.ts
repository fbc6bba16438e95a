import fs from 'node:fs';
import path from 'node:path';
import type { Test } from '@jest/test-result';
import Sequencer, { BROWSER, schedule, workerCount } from '../helpers/sequencer';

/**
 * The suite order of `npm test` (test/helpers/sequencer.js): every suite runs, longest first, and Chromium suites are
 * kept from running side by side while other suites are left to run beside them.
 */
const ROOT = path.resolve(__dirname, '../..');

interface Suite {
  path: string;
  browser: boolean;
  seconds: number;
}

/** What jest does with an order: each suite goes to the worker that is free first. Returns each suite's run. */
function run(order: Suite[], workers: number): { suite: Suite; start: number; end: number }[] {
  const freeAt = new Array<number>(workers).fill(0);
  return order.map((suite) => {
    const w = freeAt.indexOf(Math.min(...freeAt));
    const start = freeAt[w]!;
    freeAt[w] = start + suite.seconds;
    return { suite, start, end: freeAt[w]! };
  });
}

function browserOverlap(runs: ReturnType<typeof run>): number {
  const browser = runs.filter((r) => r.suite.browser).sort((a, b) => a.start - b.start);
  let overlap = 0;
  for (let i = 1; i < browser.length; i++) overlap += Math.max(0, browser[i - 1]!.end - browser[i]!.start);
  return overlap;
}

const suite = (name: string, browser: boolean, seconds: number): Suite => ({ path: `test/${name}.test.ts`, browser, seconds });

test('two workers: browser suites one after the other while other suites run beside them, longest first', () => {
  const browser = [suite('b1', true, 90), suite('b2', true, 60), suite('b3', true, 45), suite('b4', true, 30)];
  const other = [50, 45, 40, 30, 25, 20, 15, 10, 10, 5, 5, 3, 2, 1, 1].map((s, i) => suite(`o${i}`, false, s));
  const order = schedule([...other, ...browser].reverse(), 2);
  expect(order.map((s) => s.path).sort()).toEqual([...browser, ...other].map((s) => s.path).sort());
  // The longest browser suite and the longest other suite start the run; the shortest suites end it.
  expect(order.slice(0, 2).map((s) => s.path)).toEqual(['test/b1.test.ts', 'test/o0.test.ts']);
  expect(order.slice(-2).every((s) => s.seconds === 1)).toBe(true);
  expect(browserOverlap(run(order, 2))).toBe(0);
  // Longest first alone (jest's own order without a cache is by file size) puts two browser suites side by side.
  const longestFirst = [...browser, ...other].sort((a, b) => b.seconds - a.seconds);
  expect(browserOverlap(run(longestFirst, 2))).toBeGreaterThan(0);
});

test('browser suites left when the others are done still run; one worker runs longest first', () => {
  const suites = [suite('b1', true, 40), suite('b2', true, 30), suite('b3', true, 20), suite('o1', false, 10)];
  expect(schedule(suites, 2).map((s) => s.path)).toEqual(['test/b1.test.ts', 'test/o1.test.ts', 'test/b2.test.ts', 'test/b3.test.ts']);
  expect(schedule(suites, 1).map((s) => s.seconds)).toEqual([40, 30, 20, 10]);
});

test('the worker count follows --maxWorkers, -w and --runInBand, else 2 under CI', () => {
  expect(workerCount(['node', 'jest', '--maxWorkers=1'])).toBe(1);
  expect(workerCount(['node', 'jest', '--maxWorkers', '3'])).toBe(3);
  expect(workerCount(['node', 'jest', '-w=2'])).toBe(2);
  expect(workerCount(['node', 'jest', '--runInBand'])).toBe(1);
  const ci = process.env.CI;
  process.env.CI = 'true';
  try {
    expect(workerCount(['node', 'jest'])).toBe(2);
  } finally {
    if (ci === undefined) delete process.env.CI;
    else process.env.CI = ci;
  }
});

test('every suite of the repository is in the order once, and the browser suites are recognised', () => {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.test.ts')) files.push(full);
    }
  };
  walk(path.join(ROOT, 'test'));
  const tests = files.map((file) => ({ path: file, context: {}, duration: undefined }) as unknown as Test);
  const order = new Sequencer().sort(tests) as Test[];
  expect(order.map((t) => t.path).sort()).toEqual([...files].sort());
  const browser = files.filter((file) => BROWSER.test(fs.readFileSync(file, 'utf8'))).map((file) => path.relative(ROOT, file));
  expect(browser).toEqual(expect.arrayContaining(['test/browser/oauth-browser.test.ts', 'test/smoke/first-run.test.ts']));
  expect(browser).not.toContain('test/e2e/auth.test.ts');
  expect(browser.filter((f) => f.startsWith('test/browser/')).length).toBe(
    files.filter((f) => f.includes(`${path.sep}browser${path.sep}`)).length,
  );
  // The timing file names suites by their path from the repository's root, with seconds.
  const timings = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/timings.json'), 'utf8')) as Record<string, number>;
  expect(Object.keys(timings).length).toBeGreaterThan(0);
  for (const [rel, seconds] of Object.entries(timings)) {
    expect(rel).toMatch(/^test\/.+\.test\.ts$/);
    expect(seconds).toBeGreaterThan(0);
  }
});
