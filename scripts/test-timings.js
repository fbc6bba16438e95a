#!/usr/bin/env node
'use strict';
/**
 * Updates test/timings.json, the seconds each test suite takes alone, which test/helpers/sequencer.js orders the suites
 * by. Feed it jest's JSON report of a run with one worker (suites side by side slow each other down):
 *
 *   npx jest --maxWorkers=1 --json --outputFile=/tmp/jest.json [suites]
 *   node scripts/test-timings.js /tmp/jest.json
 *
 * Suites of the report get their new time; the others keep theirs; suites that no longer exist are dropped.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const TIMINGS = path.join(ROOT, 'test/timings.json');

const report = process.argv[2];
if (!report) {
  process.stderr.write('usage: node scripts/test-timings.js <jest --json report>\n');
  process.exit(2);
}
const { testResults } = JSON.parse(fs.readFileSync(report, 'utf8'));
const timings = fs.existsSync(TIMINGS) ? JSON.parse(fs.readFileSync(TIMINGS, 'utf8')) : {};
let updated = 0;
for (const result of testResults) {
  const seconds = (result.endTime - result.startTime) / 1000;
  if (!Number.isFinite(seconds) || seconds <= 0) continue;
  const rel = path.relative(ROOT, result.name).split(path.sep).join('/');
  timings[rel] = Math.round(seconds * 10) / 10;
  updated++;
}
const kept = Object.keys(timings)
  .filter((rel) => fs.existsSync(path.join(ROOT, rel)))
  .sort();
fs.writeFileSync(TIMINGS, `${JSON.stringify(Object.fromEntries(kept.map((rel) => [rel, timings[rel]])), null, 2)}\n`);
process.stdout.write(`test/timings.json: ${updated} suites updated, ${kept.length} in all\n`);
