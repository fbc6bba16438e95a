import { randomUUID } from 'node:crypto';
import { countLoginAttempt } from '../../src/db/repositories/login-failures.repo';
import { insertSession } from '../../src/db/repositories/sessions.repo';
import { makeUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * docs/security.md's lock order, users before login_failures, also inside the one statement that ends a password
 * sign-in (sessions.repo.ts insertSession with clearFailuresOf): set-password locks the user and then clears the
 * failures, so a sign-in taking them the other way round could deadlock with it.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("while another transaction holds the user's row, the sign-in statement waits for it without holding the address's failures", async () => {
  const user = await makeUser(t);
  const now = new Date();
  await countLoginAttempt(t.db, user.email, now, { threshold: 10, baseLockSeconds: 60, maxLockSeconds: 900 });
  expect(await t.db('login_failures').where({ email: user.email }).first()).toBeDefined();

  const holder = await t.db.transaction();
  await holder.raw('select id from users where id = ? for update', [user.id]);
  const signIn = insertSession(
    t.db,
    { id: randomUUID(), userId: user.id, now, expiresAt: new Date(now.getTime() + 3_600_000), amr: ['pwd'] },
    randomUUID(),
    { clearFailuresOf: user.email },
  );
  try {
    // Until the statement is waiting for a lock (bounded by the test's timeout).
    for (;;) {
      const waiting = await t.db.raw(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%insert into sessions%'",
      );
      if (waiting.rows[0].n > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const probe = await t.db.transaction();
    try {
      // Taken at once: the waiting sign-in has not touched the failures row.
      const free = await probe.raw('select email from login_failures where email = ? for update nowait', [user.email]);
      expect(free.rows).toEqual([{ email: user.email }]);
    } finally {
      await probe.rollback();
    }
  } finally {
    await holder.commit();
  }
  await expect(signIn).resolves.toMatchObject({ roles: [], permissions: [] });
  expect(await t.db('login_failures').where({ email: user.email }).first()).toBeUndefined();
  expect((await t.db('users').where({ id: user.id }).first()).last_login_at).not.toBeNull();
}, 20_000);
