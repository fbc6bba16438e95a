import type { TestApp } from './test-app';

/**
 * Makes the database refuse audit rows of `type` (about `subjectId`, when given), as a full disk or a broken trigger
 * would: a change that writes its row in its own transaction then does not happen (CONTRACT §11). Returns the undo.
 */
export async function refuseAuditRows(t: TestApp, type: string, subjectId?: string): Promise<() => Promise<void>> {
  const fn = `refuse_${Math.random().toString(36).slice(2, 10)}`;
  const condition = subjectId === undefined ? '' : ` and new.subject_id::text = '${subjectId}'`;
  await t.db.raw(`create function ${fn}() returns trigger language plpgsql as $$
    begin
      if new.type = '${type}'${condition} then raise exception 'audit write refused'; end if;
      return new;
    end $$`);
  await t.db.raw(`create trigger ${fn} before insert on audit_events for each row execute function ${fn}()`);
  return async () => {
    await t.db.raw(`drop trigger ${fn} on audit_events`);
    await t.db.raw(`drop function ${fn}()`);
  };
}
