import type { DbOrTrx } from '..';

/**
 * The planner's row count of a table (pg_class.reltuples, kept by ANALYZE and autovacuum): free to read, close to
 * the truth on a table that autovacuum keeps up with, never a scan. Null when the table has never been analysed
 * (reltuples is -1 then), so that the caller counts instead.
 */
export async function estimateRowCount(db: DbOrTrx, table: 'users' | 'audit_events'): Promise<number | null> {
  const result = await db.raw<{ rows: Array<{ n: string | number }> }>(
    'select reltuples::bigint as n from pg_class where oid = ?::regclass',
    [table],
  );
  const n = Number(result.rows[0]?.n ?? -1);
  return n >= 0 ? n : null;
}
