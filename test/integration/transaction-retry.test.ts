import { TRANSACTION_ATTEMPTS, withTransaction } from '../../src/db';
import { AppError } from '../../src/errors';
import { makeUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** Resolves once `n` parties have arrived. */
function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return async () => {
    arrived += 1;
    if (arrived === n) release();
    await all;
  };
}

describe('withTransaction > deadlocks and serialization failures (CONTRACT §8)', () => {
  test('a real deadlock between two transactions is retried: both commit, nothing is lost', async () => {
    const a = await makeUser(t);
    const b = await makeUser(t);
    const bothHoldOneRow = barrier(2);
    const attempts = { first: 0, second: 0 };
    const crossing = (name: 'first' | 'second', rows: [string, string]) =>
      withTransaction(t.db, async (trx) => {
        attempts[name] += 1;
        await trx('users')
          .where({ id: rows[0] })
          .update({ first_name: `${name}-${attempts[name]}` });
        // Only the first attempts wait for each other, so the deadlock happens exactly once.
        if (attempts[name] === 1) await bothHoldOneRow();
        await trx('users')
          .where({ id: rows[1] })
          .update({ last_name: `${name}-${attempts[name]}` });
        return name;
      });
    const results = await Promise.all([crossing('first', [a.id, b.id]), crossing('second', [b.id, a.id])]);
    expect(results).toEqual(['first', 'second']);
    // PostgreSQL aborted one of them (40P01); the wrapper ran it again.
    expect(attempts.first + attempts.second).toBe(3);
  });

  test('a transaction that keeps losing gets 503 service_unavailable after a bounded number of attempts', async () => {
    let runs = 0;
    const failing = withTransaction(t.db, async () => {
      runs += 1;
      throw Object.assign(new Error('could not serialize access'), { code: '40001' });
    });
    await expect(failing).rejects.toBeInstanceOf(AppError);
    await expect(failing).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(runs).toBe(TRANSACTION_ATTEMPTS);
  });

  test('other errors are not retried', async () => {
    let runs = 0;
    await expect(
      withTransaction(t.db, async () => {
        runs += 1;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(runs).toBe(1);
  });
});
