/**
 * A table's columns declared once (docs/architecture.md, "Typed rows"): a map from each Row field (camelCase) to how
 * the value pg returns for its snake_case column becomes that field. From the one map follow the Row type, the record
 * type (the columns as pg returns them, for Knex's table map) and the mapper, a plain loop over a precomputed key list
 * (no parsing, no per-row allocation but the Row itself: it runs on the hot paths).
 */

/** One column: the value pg returns (`R`) and the Row field it becomes (`T`); `from` is null where they are the same. */
export interface Column<R, T> {
  readonly from: ((value: R) => T) | null;
  readonly name?: string;
  /** In the record, not in the Row (`hidden`). */
  readonly hidden?: true;
  /** Types only: never set. */
  readonly types?: { record: R; row: T };
}

type AnyColumn = Column<any, any>;
export type Columns = Record<string, AnyColumn>;

/** `createdAt` → `created_at`. */
export type SnakeCase<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeCase<T>}`
  : S;

export type RowOf<C extends Columns> = { [K in keyof C as C[K] extends { hidden: true } ? never : K]: NonNullable<C[K]['types']>['row'] };
/** A column's name: its field's in snake_case, or the one given with `named`. */
type ColumnName<C extends Columns, K extends keyof C & string> = C[K] extends { name: infer N extends string } ? N : SnakeCase<K>;
export type RecordOf<C extends Columns> = {
  [K in keyof C & string as ColumnName<C, K>]: NonNullable<C[K]['types']>['record'];
};

export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The value as pg returns it. */
export const same = <T>(): Column<T, T> => ({ from: null });
/** A column whose name is not its field's in snake_case. */
export const named = <N extends string, R, T>(name: N, column: Column<R, T>): Column<R, T> & { readonly name: N } => ({
  ...column,
  name,
});
export const convert = <R, T>(from: (value: R) => T): Column<R, T> => ({ from });
/** A column the Row leaves out (a secret's hash, a spent mark only statements read): in the record only. */
export const hidden = <T>(): Column<T, T> & { readonly hidden: true } => ({ from: null, hidden: true });

const toDate = (v: Date | string): Date => new Date(v);
const toDateOrNull = (v: Date | string | null | undefined): Date | null => (v ? new Date(v) : null);
const toNumber = (v: number | string): number => Number(v);
const toString = (v: string | number): string => String(v);
const toNull = <T>(v: T | null | undefined): T | null => v ?? null;
const toFlag = (v: boolean | null | undefined): boolean => v === true;

/** A timestamp (a fresh Date). */
export const date: Column<Date, Date> = { from: toDate };
/** A nullable timestamp. */
export const dateOrNull: Column<Date | null, Date | null> = { from: toDateOrNull };
/** An integer pg may return as text (bigint, count). */
export const num: Column<number | string, number> = { from: toNumber };
/** A bigserial id pg returns as text or number, as a string. */
export const str: Column<string | number, string> = { from: toString };
/** A column a statement may leave out (a join, an older row): null then. */
export const orNull = <T>(): Column<T | null | undefined, T | null> => ({ from: toNull });
/** A boolean that is false unless true (a nullable or newer column). */
export const flag: Column<boolean | null | undefined, boolean> = { from: toFlag };

/** The columns a Row shows, with their fields. */
const shown = (columns: Columns) => Object.entries(columns).filter(([, column]) => !column.hidden);

/** The mapper of a column map: one loop over keys computed once. */
export function rowMapper<C extends Columns>(columns: C): (record: RecordOf<C>) => RowOf<C> {
  const plan = shown(columns).map(([field, column]) => ({ field, name: column.name ?? snakeCase(field), from: column.from }));
  return (record) => {
    const source: Record<string, unknown> = record;
    const row: Record<string, unknown> = {};
    for (const { field, name, from } of plan) row[field] = from ? from(source[name]) : source[name];
    return row as RowOf<C>;
  };
}

/** The other way, for writes: the fields given (undefined ones left out) under their column names, values unchanged. */
export function recordWriter<C extends Columns>(columns: C): (fields: Partial<RowOf<C>>) => Partial<RecordOf<C>> {
  const plan = shown(columns).map(([field, column]) => ({ field, name: column.name ?? snakeCase(field) }));
  return (fields) => {
    const source: Record<string, unknown> = fields;
    const record: Record<string, unknown> = {};
    for (const { field, name } of plan) if (source[field] !== undefined) record[name] = source[field];
    return record as Partial<RecordOf<C>>;
  };
}
