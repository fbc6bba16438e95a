import { Writable } from 'node:stream';
import pino from 'pino';
import { TransactionRolledBack, withTransaction } from '../../src/db';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { makeUser } from '../helpers/factories';

/**
 * A transaction that is rolled back publishes nothing and is not a success (src/db/index.ts withTransaction, docs/
 * architecture.md "Transactions"): Knex resolves a transaction whose callback calls `trx.rollback()` without an error as
 * if it had committed, so the events recorded in it reached the log and the metrics, and the caller got its value.
 * Checked with the real event bus of the app: its log lines and the audit table (the outbox webhooks are delivered from).
 */

let t: TestApp;
const lines: Array<{ msg?: string; event?: { subjectId?: string } }> = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  t = await createTestApp({ logger: pino({ level: 'info' }, sink) });
});
afterAll(async () => {
  await t.close();
});

/** What every place that publishes an event shows of one about `subjectId`, once the bus has settled. */
async function published(subjectId: string) {
  await t.ctx.events.idle();
  return {
    logged: lines.some((l) => l.msg === 'security event user.changed' && l.event?.subjectId === subjectId),
    audited: (await t.db('audit_events').where({ type: 'user.changed', subject_id: subjectId })).length,
  };
}

const record = (db: Parameters<TestApp['ctx']['events']['record']>[0], subjectId: string) =>
  t.ctx.events.record(db, { type: 'user.changed', actorId: null, subjectId, detail: { fields: ['first_name'] } });

test('trx.rollback() without an error: the caller gets TransactionRolledBack, the change is undone, nothing is logged or audited', async () => {
  const user = await makeUser(t);
  const outcome = withTransaction(t.ctx.db, async (trx) => {
    await trx('users').where({ id: user.id }).update({ first_name: 'Rolled' });
    await record(trx, user.id);
    await trx.rollback();
    return 'done';
  });
  await expect(outcome).rejects.toBeInstanceOf(TransactionRolledBack);
  expect(await published(user.id)).toEqual({ logged: false, audited: 0 });
  expect((await t.db('users').where({ id: user.id }).first()).first_name).toBe(user.firstName);
});

test('a rollback with an error publishes nothing and rethrows that error', async () => {
  const user = await makeUser(t);
  const boom = new Error('refused after recording');
  await expect(
    withTransaction(t.ctx.db, async (trx) => {
      await record(trx, user.id);
      throw boom;
    }),
  ).rejects.toBe(boom);
  expect(await published(user.id)).toEqual({ logged: false, audited: 0 });
});

test('a savepoint rolled back without an error publishes nothing, while the enclosing transaction commits its own', async () => {
  const inner = await makeUser(t);
  const outer = await makeUser(t);
  await withTransaction(t.ctx.db, async (trx) => {
    await record(trx, outer.id);
    await expect(
      withTransaction(trx, async (savepoint) => {
        await record(savepoint, inner.id);
        await savepoint.rollback();
      }),
    ).rejects.toBeInstanceOf(TransactionRolledBack);
  });
  expect(await published(inner.id)).toEqual({ logged: false, audited: 0 });
  expect(await published(outer.id)).toEqual({ logged: true, audited: 1 });
});

test('a committed transaction publishes once and answers its value', async () => {
  const user = await makeUser(t);
  await expect(
    withTransaction(t.ctx.db, async (trx) => {
      await record(trx, user.id);
      return 'done';
    }),
  ).resolves.toBe('done');
  expect(await published(user.id)).toEqual({ logged: true, audited: 1 });
});
