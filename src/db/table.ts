import type { Knex } from 'knex';
import type { Tables } from 'knex/types/tables';
import type { DbOrTrx } from '.';
import { recordWriter, rowMapper, type Columns, type RecordOf, type RowOf } from './rows';

/**
 * The statements a repository writes for most tables, once (docs/architecture.md, "Typed rows"): a table named in
 * Knex's table map (src/db/tables.ts) with its mapper gives find, list, insert, update, delete and the two steps of a
 * single-use row (read it while live, spend it), each typed by the table's record and returning Rows. Statements of
 * their own (joins, upserts, raw SQL) stay in the repository and may use the mapper (`toRow`).
 */
type TableName = keyof Tables;
type RecordIn<K extends TableName> = Knex.ResolveTableType<Tables[K]>;
/** Which rows: column → value, where null means `is null` (Knex's object form of `where`). */
type Where<K extends TableName> = Partial<RecordIn<K>>;
/** What a statement writes, as Knex's typed `insert` and `update` take it (jsonb columns as JSON text, db/index.ts). */
type Write<K extends TableName, S extends 'insert' | 'update'> =
  Tables[K] extends Knex.CompositeTableType<unknown> ? Knex.ResolveTableType<Tables[K], S> : Knex.DbRecord<Tables[K]>;
type Order<K extends TableName> = Array<(keyof RecordIn<K> & string) | { column: keyof RecordIn<K> & string; order: 'asc' | 'desc' }>;

export interface Table<K extends TableName, Row, In = RecordIn<K>> {
  readonly toRow: (record: In) => Row;
  /** The row `where` picks; undefined when there is none. */
  find(db: DbOrTrx, where: Where<K>): Promise<Row | undefined>;
  /** The rows `where` picks, in this order. */
  list(db: DbOrTrx, where: Where<K>, order: Order<K>): Promise<Row[]>;
  /** Inserts one row and returns it as stored. */
  insert(db: DbOrTrx, values: Write<K, 'insert'>): Promise<Row>;
  /** Updates the row `where` picks and returns it as stored; undefined when there is none. */
  update(db: DbOrTrx, where: Where<K>, values: Write<K, 'update'>): Promise<Row | undefined>;
  /** Deletes the rows `where` picks; how many there were. */
  delete(db: DbOrTrx, where: Where<K>): Promise<number>;
  /**
   * A single-use row while it is live: `where` picks it unspent (e.g. `used_at: null`), unexpired at `now` and, with
   * `failuresBelow`, with fewer wrong attempts. Reading does not spend it.
   */
  findLive(db: DbOrTrx, where: Where<K>, live: Live): Promise<Row | undefined>;
  /**
   * Spends a live single-use row (as findLive picks it) in ONE conditional UPDATE … RETURNING: of N concurrent spends
   * exactly one gets the row back, on one instance or many (docs/architecture.md, "Single-use things"). With
   * `skipLocked` (the table's key column) a spend that finds the row locked by another does not wait for it: it finds
   * nothing at once.
   */
  spend(
    db: DbOrTrx,
    where: Where<K>,
    values: Write<K, 'update'>,
    live: Live & { skipLocked?: keyof RecordIn<K> & string },
  ): Promise<Row | undefined>;
}

/** When a single-use row is live: unexpired at `now`, and with fewer than `failuresBelow` wrong attempts if given. */
export interface Live {
  now: Date;
  failuresBelow?: number;
}

/** The live condition of a single-use row (Table.findLive, Table.spend), for a statement of its own (`.modify(live(…))`). */
export function live({ now, failuresBelow }: Live): (q: Knex.QueryBuilder) => void {
  return (q) => {
    q.where('expires_at', '>', now);
    if (failuresBelow !== undefined) q.where('failures', '<', failuresBelow);
  };
}

/**
 * A table read through its column map (src/db/rows.ts), declared once: the Row type is `RowOf<typeof t.columns>`, the
 * record Knex's table map holds (src/db/tables.ts) is `RecordOf<typeof t.columns>`, and `toRecord` is the way back for
 * writes (the fields given, by their column names).
 */
export function table<K extends TableName, C extends Columns>(
  name: K,
  columns: C,
): Table<K, RowOf<C>, RecordOf<C>> & { readonly columns: C; readonly toRecord: (fields: Partial<RowOf<C>>) => Partial<RecordOf<C>> } {
  return { ...statements(name, rowMapper(columns)), columns, toRecord: recordWriter(columns) };
}

/** A table whose rows a mapper of its own reads (a record parsed through a schema, a field with a default). */
export function mappedTable<K extends TableName, Row>(name: K, toRow: (record: RecordIn<K>) => Row): Table<K, Row> {
  return statements(name, toRow);
}

function statements<K extends TableName, Row, In>(name: K, toRow: (record: In) => Row): Table<K, Row, In> {
  // Read through Knex's untyped builder: the signatures above carry the table's types, the mapper takes the record.
  const from: string = name;
  const one = (row: In | undefined): Row | undefined => (row ? toRow(row) : undefined);
  return {
    toRow,
    find: async (db, where) => one(await db(from).where(where).first()),
    list: async (db, where, order) => (await db(from).where(where).orderBy(order)).map(toRow),
    insert: async (db, values) => {
      const [row] = await db(from).insert(values).returning('*');
      return toRow(row);
    },
    update: async (db, where, values) => one((await db(from).where(where).update(values).returning('*'))[0]),
    delete: async (db, where) => db(from).where(where).delete(),
    findLive: async (db, where, when) => one(await db(from).where(where).modify(live(when)).first()),
    spend: async (db, where, values, when) => {
      const { skipLocked } = when;
      const picked = skipLocked
        ? db(from).whereIn(skipLocked, db(from).select(skipLocked).where(where).modify(live(when)).forUpdate().skipLocked())
        : db(from).where(where).modify(live(when));
      return one((await picked.update(values).returning('*'))[0]);
    },
  };
}
