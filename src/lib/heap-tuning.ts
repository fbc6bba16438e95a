import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before it collects again, in
 * percent. V8's own factor on a machine with gigabytes free is up to 4× (300 %): with this server's ≈ 30 MB of live
 * heap, objects of requests in flight that a young-generation collection promotes piled up as garbage to 110–130 MB
 * of old space under load (issue 10: heap snapshots show no per-request growth, only uncollected garbage). 100 %
 * lets it double: a full collection about every 2 s under token load instead of every 0.65 s at 30 % (the value
 * before), whose marking steps of up to 20 ms were the token requests' p99 (60 against the peer's 26 ms) and 6 % of
 * their CPU; peak RSS about 170 MB, under node-oidc-provider's (docs/performance.md, "The old generation allowed to
 * double").
 */
export const HEAP_GROWING_PERCENT = 100;

/**
 * The V8 flags by which an operator decides the heap's growth themselves; either turns the default off. Size limits
 * (`--max-old-space-size`, `--max-semi-space-size`) do not: they bound the heap, the growth percent still applies.
 */
const OPERATOR_HEAP_FLAGS = /^--(heap-growing-percent|optimize-for-size)\b/;

/**
 * Sets the server's default heap growth unless the operator chose the growth (`--heap-growing-percent` or
 * `--optimize-for-size` on the node command line or in NODE_OPTIONS). V8 reads `--heap-growing-percent` at every
 * collection, so setting it at start-up, before the heap has grown, has the effect of the command-line flag
 * (test/unit/heap-tuning.test.ts pins that). Returns whether it was set.
 */
export function tuneHeap(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((flag) => flag.replace(/_/g, '-'));
  if (given.some((flag) => OPERATOR_HEAP_FLAGS.test(flag))) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
