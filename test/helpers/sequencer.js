'use strict';
/**
 * The order jest hands suites to its workers (jest.config.js `testSequencer`). Jest gives the next suite of this order
 * to whichever worker is free, so the order alone decides which suites run side by side. Two Chromium suites side by
 * side each take about 2.5 times as long as alone (two cores), so two at once finish later than one after the other.
 *
 * The order is a simulated schedule: with N workers (--maxWorkers; 2 in CI), each free worker takes the longest browser
 * suite left when no browser suite runs at that moment, and the longest other suite otherwise. Suites run longest
 * first, so the short ones fill the end; browser suites run one at a time as long as other suites are left to run
 * beside them. Durations come from test/timings.json (seconds, one suite alone: `node scripts/test-timings.js`);
 * a suite missing there is estimated from its file size, at the seconds per byte of the known suites of its kind.
 * With one worker the order does not change the time; it is longest first too.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = path.resolve(__dirname, '../..');
const TIMINGS = path.join(ROOT, 'test/timings.json');
/** What makes a suite a browser suite: it drives Chromium itself or through a helper that does. */
const BROWSER = /launchChromium|playwright-core|refused-forms\.shared|helpers\/(console-browser|spa-guide|accessibility|ensure-chromium)'/;

/** The worker count jest will use: --maxWorkers/-w, --runInBand/-i, else jest.config.js's own rule. */
function workerCount(argv = process.argv) {
  let value;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--runInBand' || arg === '-i') return 1;
    const eq = /^(?:--maxWorkers|-w)=(.+)$/.exec(arg);
    if (eq) value = eq[1];
    else if ((arg === '--maxWorkers' || arg === '-w') && i + 1 < argv.length) value = argv[i + 1];
  }
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  if (value === undefined) value = process.env.CI ? '2' : '50%';
  const n = value.endsWith('%') ? Math.floor((cores * parseFloat(value)) / 100) : parseInt(value, 10);
  return Number.isFinite(n) && n >= 1 ? n : 1;
}

function readTimings() {
  try {
    return JSON.parse(fs.readFileSync(TIMINGS, 'utf8'));
  } catch {
    return {};
  }
}

/**
 * The order for `suites` ({ path, browser, seconds }) on `workers` workers: the simulated schedule described above.
 * Returns the suites in the order they start.
 */
function schedule(suites, workers) {
  const longestFirst = (a, b) => b.seconds - a.seconds || a.path.localeCompare(b.path);
  const browser = suites.filter((s) => s.browser).sort(longestFirst);
  const other = suites.filter((s) => !s.browser).sort(longestFirst);
  if (workers <= 1) return [...suites].sort(longestFirst);
  const freeAt = new Array(workers).fill(0);
  let browserUntil = 0;
  const order = [];
  while (browser.length > 0 || other.length > 0) {
    const w = freeAt.indexOf(Math.min(...freeAt));
    const now = freeAt[w];
    let next;
    if (browser.length > 0 && (browserUntil <= now || other.length === 0)) {
      next = browser.shift();
      browserUntil = now + next.seconds;
    } else {
      next = other.shift();
    }
    freeAt[w] = now + next.seconds;
    order.push(next);
  }
  return order;
}

class SideBySideSequencer extends Sequencer {
  sort(tests) {
    const timings = readTimings();
    const suites = tests.map((test) => {
      const rel = path.relative(ROOT, test.path).split(path.sep).join('/');
      let source = '';
      try {
        source = fs.readFileSync(test.path, 'utf8');
      } catch {
        // A suite that cannot be read is estimated as empty; jest reports its own error for it.
      }
      return { test, path: rel, browser: BROWSER.test(source), size: source.length, seconds: timings[rel] };
    });
    // Seconds per byte of the timed suites of each kind, for the suites not in the timing file.
    for (const browser of [true, false]) {
      const known = suites.filter((s) => s.browser === browser && typeof s.seconds === 'number');
      const bytes = known.reduce((sum, s) => sum + s.size, 0);
      const rate = bytes > 0 ? known.reduce((sum, s) => sum + s.seconds, 0) / bytes : browser ? 1 / 500 : 1 / 2000;
      for (const s of suites) if (s.browser === browser && typeof s.seconds !== 'number') s.seconds = s.size * rate;
    }
    return schedule(suites, workerCount()).map((s) => s.test);
  }
}

module.exports = SideBySideSequencer;
module.exports.schedule = schedule;
module.exports.workerCount = workerCount;
module.exports.BROWSER = BROWSER;
