import { randomUUID } from 'node:crypto';
import { withTransaction } from '../../src/db';
import { spendJti } from '../../src/db/repositories/used-jtis.repo';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Single-use identifiers (DPoP proofs, private_key_jwt assertions) spent in batches (issue 34's speed bound): however
 * the uses meet, in one batch or in several, exactly one use of an identifier is accepted, and nothing else is lost.
 */
let t: TestApp;
const later = () => new Date(Date.now() + 120_000);

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

test('40 concurrent uses of one jti: exactly one is accepted, and a later use is refused', async () => {
  const jti = randomUUID();
  const results = await Promise.all(Array.from({ length: 40 }, () => spendJti(t.db, 'dpop_proof', 'key-a', jti, later())));
  expect(results.filter(Boolean)).toHaveLength(1);
  expect(await spendJti(t.db, 'dpop_proof', 'key-a', jti, later())).toBe(false);
});

test('concurrent uses of 60 different identifiers all succeed, once each, and every one is stored', async () => {
  const jtis = Array.from({ length: 60 }, () => randomUUID());
  const first = await Promise.all(jtis.map((jti) => spendJti(t.db, 'client_assertion', 'client-1', jti, later())));
  expect(first).toEqual(jtis.map(() => true));
  // Their replays, all at once: refused, whichever batch each lands in.
  const again = await Promise.all(jtis.map((jti) => spendJti(t.db, 'client_assertion', 'client-1', jti, later())));
  expect(again).toEqual(jtis.map(() => false));
  const { n } = (await t.db('oauth_used_jtis').count('* as n').first()) as { n: string };
  expect(Number(n)).toBeGreaterThanOrEqual(61);
});

test('the same jti for another key or kind is another identifier', async () => {
  const jti = randomUUID();
  const spends = await Promise.all([
    spendJti(t.db, 'dpop_proof', 'key-a', jti, later()),
    spendJti(t.db, 'dpop_proof', 'key-b', jti, later()),
    spendJti(t.db, 'client_assertion', 'key-a', jti, later()),
    spendJti(t.db, 'dpop_proof', 'key-a', jti, later()),
  ]);
  // Another key and another kind are spent; of the two uses of the same identifier exactly one is accepted (which one
  // depends on the connections their batches went out on, not on the order of the calls).
  expect(spends.slice(1, 3)).toEqual([true, true]);
  expect([spends[0], spends[3]].filter(Boolean)).toHaveLength(1);
});

test('inside a transaction the spend is part of it: rolled back, the identifier is usable again', async () => {
  const jti = randomUUID();
  await expect(
    withTransaction(t.db, async (trx) => {
      expect(await spendJti(trx, 'dpop_proof', 'key-c', jti, later())).toBe(true);
      expect(await spendJti(trx, 'dpop_proof', 'key-c', jti, later())).toBe(false);
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  expect(await spendJti(t.db, 'dpop_proof', 'key-c', jti, later())).toBe(true);
});
