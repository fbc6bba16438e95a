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
