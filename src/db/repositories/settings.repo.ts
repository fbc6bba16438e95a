import type { DbOrTrx } from '..';

/** The one row of settings_version (id 1); a bigint, so pg returns the version as text. */
export interface SettingsVersionRecord {
  id: number;
  version: string;
}

/** CONTRACT §18: the stored settings (name -> JSON value) and the version every change bumps. */
export interface StoredSettings {
  version: number;
  values: Record<string, unknown>;
}

/** The snapshot of what is stored: every row and the version, read in one statement (consistent with each other). */
export async function loadStoredSettings(db: DbOrTrx): Promise<StoredSettings> {
  const { rows } = await db.raw<{ rows: Array<{ version: string; name: string | null; value: unknown }> }>(
    `select v.version, s.name, s.value
       from settings_version v left join settings s on true
      where v.id = 1`,
  );
  const values: Record<string, unknown> = {};
  for (const row of rows) if (row.name !== null) values[row.name] = row.value;
  return { version: Number(rows[0]?.version ?? 0), values };
}

/** The version of the stored settings (the periodic check of each instance). */
export async function storedSettingsVersion(db: DbOrTrx): Promise<number> {
  const row = await db('settings_version').where({ id: 1 }).first('version');
  return Number(row?.version ?? 0);
}

/**
 * Bumps the version and locks its row until the transaction ends: concurrent changes run one after the other, so each
 * reads the "before" the previous one left. Returns the new version.
 */
export async function bumpSettingsVersion(trx: DbOrTrx): Promise<number> {
  const [row] = await trx('settings_version').where({ id: 1 }).increment('version', 1).returning('version');
  if (!row) throw new Error('settings_version has no row (the migration inserts it)');
  return Number(row.version);
}

export async function storeSetting(trx: DbOrTrx, name: string, value: unknown, updatedBy: string | null, now: Date): Promise<void> {
  await trx('settings')
    .insert({ name, value: JSON.stringify(value), updated_at: now, updated_by: updatedBy })
    .onConflict('name')
    .merge(['value', 'updated_at', 'updated_by']);
}

/** Tells every instance listening on `channel` (delivered when the transaction commits, not before). */
export async function notifySettingsChanged(trx: DbOrTrx, channel: string, version: number): Promise<void> {
  await trx.raw('select pg_notify(?, ?)', [channel, String(version)]);
}
