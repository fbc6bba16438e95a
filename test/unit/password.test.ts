import { createPasswordHasher, type PasswordHasher } from '../../src/lib/password';

let hasher: PasswordHasher;
beforeAll(() => {
  hasher = createPasswordHasher(10);
});
afterAll(async () => {
  await hasher.close();
});

describe('password hasher (native bcrypt off the event loop)', () => {
  test('hash then verify: right password true, wrong false; the hash never contains the password', async () => {
    const hash = await hasher.hash('s3cret-pass');
    expect(hash).toMatch(/^\$2[aby]\$10\$/);
    expect(hash).not.toContain('s3cret-pass');
    expect(await hasher.verify('s3cret-pass', hash)).toBe(true);
    expect(await hasher.verify('s3cret-pasS', hash)).toBe(false);
  });

  test('no stored hash (unknown email, invited user) is always false', async () => {
    expect(await hasher.verify('anything', undefined)).toBe(false);
    expect(await hasher.verify('anything', null)).toBe(false);
  });

  test('a storm of hashes does not stall the event loop', async () => {
    // Counts timer callbacks that run while hashes are still pending. Hashing on the main thread would let none
    // run until every hash had finished; off the loop, the loop keeps serving. (No wall-clock bound: the suite
    // asserts behaviour, not speed, so a loaded CI machine cannot make it flaky.)
    let pending = 12;
    let ticksWhilePending = 0;
    const timer = setInterval(() => {
      if (pending > 0) ticksWhilePending += 1;
    }, 1);
    await Promise.all(Array.from({ length: 12 }, (_, i) => hasher.hash(`storm-${i}`).finally(() => (pending -= 1))));
    clearInterval(timer);
    expect(ticksWhilePending).toBeGreaterThanOrEqual(5);
  });
});

test('hashes written by bcryptjs (the previous implementation) still verify', async () => {
  // bcryptjs 3 hashSync('legacy-pass', 10) and a $2a$ hash of the same password: both prefixes stay valid.
  expect(await hasher.verify('legacy-pass', LEGACY_2B)).toBe(true);
  expect(await hasher.verify('legacy-pasS', LEGACY_2B)).toBe(false);
  expect(await hasher.verify('legacy-pass', LEGACY_2A)).toBe(true);
});

const LEGACY_2B = '$2b$10$mevdoRmUfmfb1CGKk1DBtuM8ESe39l3QYySXUbgfTJFCdk9ygVpim';
// $2a$ and $2b$ differ only for passwords of 255 bytes or more: the same digest under the older prefix.
const LEGACY_2A = LEGACY_2B.replace('$2b$', '$2a$');

test('with a concurrency of one, hashes run one after another and every one completes', async () => {
  const one = createPasswordHasher(4, 1);
  const order: number[] = [];
  const hashes = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      one.hash(`pass-${i}`).then((h) => {
        order.push(i);
        return h;
      }),
    ),
  );
  expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  for (const [i, h] of hashes.entries()) expect(await one.verify(`pass-${i}`, h)).toBe(true);
  expect(await one.verify('anything', null)).toBe(false);
});

describe('unsaturated: background work waits while every hashing slot is taken (webhook attempts, docs/webhooks.md)', () => {
  test('resolves at once while a slot is free', async () => {
    const one = createPasswordHasher(4, 1);
    let resolved = false;
    await one.unsaturated(60_000).then(() => (resolved = true));
    expect(resolved).toBe(true);
  });

  // A bcrypt hash at cost 12 takes a hundred milliseconds or more on any machine, more under load: a wait still pending
  // 5 ms into one is pending because of it. The 60 s bound cannot end these waits within jest's timeout.
  const pendingAfter5ms = (p: Promise<unknown>) =>
    Promise.race([p.then(() => 'went on'), new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5))]);

  test('while the only slot hashes, waits until that hash is done', async () => {
    const one = createPasswordHasher(12, 1);
    const hashing = one.hash('slot-taken');
    const waited = one.unsaturated(60_000);
    expect(await pendingAfter5ms(waited)).toBe('still waiting');
    await hashing;
    await waited;
  });

  test('while hashes queue behind the slot, goes on after its bound (a login storm cannot starve it)', async () => {
    const one = createPasswordHasher(12, 1);
    let done = 0;
    const storm = Promise.all(Array.from({ length: 3 }, (_, i) => one.hash(`storm-${i}`).then(() => (done += 1))));
    let doneWhenItWentOn = -1;
    await one.unsaturated(20).then(() => (doneWhenItWentOn = done));
    await storm;
    // Each hash at cost 12 takes far longer than 20 ms: the wait ended by its bound while the first still ran. Had it
    // waited for a free slot instead, it would have gone on only as the last one finished (two counted by then).
    expect(doneWhenItWentOn).toBeLessThan(2);
  });

  test('a slot freed between two queued hashes is handed on: the wait goes on only when one stays free', async () => {
    const one = createPasswordHasher(12, 1);
    const first = one.hash('first');
    const second = one.hash('second');
    const waited = one.unsaturated(60_000);
    await first;
    expect(await pendingAfter5ms(waited)).toBe('still waiting');
    await second;
    await waited;
  });
});
