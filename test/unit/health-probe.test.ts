import type { Db } from '../../src/db';
import { createHealthProbe, HEALTH_MAX_AGE_MS, HEALTH_REFRESH_AFTER_MS, HEALTH_TIMEOUT_MS } from '../../src/services/health.service';

/**
 * GET /health turns 503 within 2 s of the database going away or hanging (CONTRACT: load balancers rely on it).
 * Proved on a fake clock instead of timed against a real database: jest's fake timers drive the probe's timeout and
 * the same fake time is the probe's injected `now`, so nothing here depends on how fast the machine is.
 */

/** The budget /health promises: a database that stops answering is reported down within this long. */
const DOWN_WITHIN_MS = 2000;

/**
 * The smallest database pingDatabase accepts (it awaits `db.raw('select 1')`): the ping answers, fails, or never
 * settles (a server that accepted the connection and went silent), as the test says.
 */
function fakeDb() {
  let mode: 'up' | 'down' | 'hang' = 'up';
  let pings = 0;
  const db = {
    raw: () => {
      pings += 1;
      if (mode === 'up') return Promise.resolve({ rows: [{ '?column?': 1 }] });
      if (mode === 'down') return Promise.reject(new Error('connect ECONNREFUSED'));
      return new Promise(() => undefined);
    },
  } as unknown as Db;
  return {
    db,
    set: (m: typeof mode) => (mode = m),
    pings: () => pings,
  };
}

/** A check whose outcome can be looked at while it is still pending. */
function watch(check: Promise<boolean>): { result: () => boolean | 'pending' } {
  let result: boolean | 'pending' = 'pending';
  void check.then((ok) => (result = ok));
  return { result: () => result };
}

beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
});

const fakeNow = () => jest.now();

test('the two limits add up to less than the 2 s budget', () => {
  expect(HEALTH_MAX_AGE_MS + HEALTH_TIMEOUT_MS).toBeLessThan(DOWN_WITHIN_MS);
  expect(HEALTH_REFRESH_AFTER_MS).toBeLessThan(HEALTH_MAX_AGE_MS);
});

test('a ping that never settles counts as down once HEALTH_TIMEOUT_MS has passed, not before', async () => {
  const fake = fakeDb();
  fake.set('hang');
  const probe = createHealthProbe(fake.db, fakeNow);

  const check = watch(probe.check());
  await jest.advanceTimersByTimeAsync(HEALTH_TIMEOUT_MS - 1);
  expect(check.result()).toBe('pending');
  await jest.advanceTimersByTimeAsync(1);
  expect(check.result()).toBe(false);
  expect(fake.pings()).toBe(1);
});

test('a ping that fails answers down at once', async () => {
  const fake = fakeDb();
  fake.set('down');
  const probe = createHealthProbe(fake.db, fakeNow);
  const check = watch(probe.check());
  await jest.advanceTimersByTimeAsync(0);
  expect(check.result()).toBe(false);
});

test('a result answers at once until HEALTH_MAX_AGE_MS after its probe started, refreshing in the background', async () => {
  const fake = fakeDb();
  const probe = createHealthProbe(fake.db, fakeNow);
  const start = jest.now();
  expect(await probe.check()).toBe(true);
  expect(fake.pings()).toBe(1);

  // The database fails from now on. Just under the maximum age the old result still answers at once.
  fake.set('down');
  jest.setSystemTime(start + HEALTH_MAX_AGE_MS - 1);
  const young = watch(probe.check());
  await jest.advanceTimersByTimeAsync(0);
  expect(young.result()).toBe(true);
  // …and, being older than HEALTH_REFRESH_AFTER_MS, it started the next probe in the background.
  expect(fake.pings()).toBe(2);

  // That probe found the database down: its result answers from then on.
  const next = watch(probe.check());
  await jest.advanceTimersByTimeAsync(0);
  expect(next.result()).toBe(false);
});

test('a good result is not reused once HEALTH_MAX_AGE_MS old: the check waits for a fresh probe', async () => {
  const fake = fakeDb();
  const probe = createHealthProbe(fake.db, fakeNow);
  const start = jest.now();
  expect(await probe.check()).toBe(true);

  fake.set('hang');
  jest.setSystemTime(start + HEALTH_MAX_AGE_MS);
  const stale = watch(probe.check());
  await jest.advanceTimersByTimeAsync(0);
  expect(stale.result()).toBe('pending');
  expect(fake.pings()).toBe(2);
  await jest.advanceTimersByTimeAsync(HEALTH_TIMEOUT_MS);
  expect(stale.result()).toBe(false);
});

test('a database that hangs right after a good probe is reported down within 2 s of that probe, even in the worst case', async () => {
  // Worst case: the last good probe started at `start`, the database hangs at once, a check just before the result
  // expires starts a background probe (which hangs too), and the next check arrives as the result expires.
  const fake = fakeDb();
  const probe = createHealthProbe(fake.db, fakeNow);
  const start = jest.now();
  expect(await probe.check()).toBe(true);

  fake.set('hang');
  await jest.advanceTimersByTimeAsync(HEALTH_MAX_AGE_MS - 1);
  expect(await probe.check()).toBe(true); // still young enough; the background probe it starts hangs
  expect(fake.pings()).toBe(2);

  await jest.advanceTimersByTimeAsync(1);
  const late = watch(probe.check()); // the result is too old: this check waits for the hanging probe
  expect(fake.pings()).toBe(2); // it shares the probe in flight rather than starting another

  // Just before the 2 s mark (counted from the last good probe's start) the check has answered down.
  await jest.advanceTimersByTimeAsync(start + DOWN_WITHIN_MS - 1 - jest.now());
  expect(late.result()).toBe(false);
});

test('fresh() answers without waiting only while a result is young enough, and refreshes it as check() does', async () => {
  const fake = fakeDb();
  const probe = createHealthProbe(fake.db, fakeNow);
  // No probe yet: nothing to answer at once (the handler then waits for check()).
  expect(probe.fresh()).toBeUndefined();
  expect(fake.pings()).toBe(0);
  const start = jest.now();
  expect(await probe.check()).toBe(true);

  fake.set('down');
  jest.setSystemTime(start + HEALTH_REFRESH_AFTER_MS - 1);
  expect(probe.fresh()).toBe(true);
  expect(fake.pings()).toBe(1); // young: no probe started
  jest.setSystemTime(start + HEALTH_REFRESH_AFTER_MS);
  expect(probe.fresh()).toBe(true);
  expect(fake.pings()).toBe(2); // past the refresh age: the next probe started in the background
  await jest.advanceTimersByTimeAsync(0);
  expect(probe.fresh()).toBe(false); // its result (down) answers from then on

  jest.setSystemTime(start + HEALTH_REFRESH_AFTER_MS + HEALTH_MAX_AGE_MS);
  expect(probe.fresh()).toBeUndefined(); // too old: the caller must wait for a probe
});
