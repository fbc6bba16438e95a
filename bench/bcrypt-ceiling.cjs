// The bcrypt ceiling of one core: password comparisons per second at the given cost, one thread, for SECONDS.
// Uses the same bcrypt implementation as the server (src/lib/password.ts). Usage: node bcrypt-ceiling.cjs COST SECONDS
'use strict';
const { hashSync, compareSync } = require('./bcrypt-impl.cjs');

const cost = Number(process.argv[2] ?? 10);
const seconds = Number(process.argv[3] ?? 3);
const hash = hashSync('bench-password', cost);
compareSync('bench-password', hash);
const started = process.hrtime.bigint();
let n = 0;
while (Number(process.hrtime.bigint() - started) / 1e9 < seconds) {
  compareSync('bench-password', hash);
  n++;
}
const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ cost, perSecond: n / elapsed })}\n`);
