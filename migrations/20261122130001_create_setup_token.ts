import type { Knex } from 'knex';

/**
 * Issue 13: the one-time first-run setup link. At most one row (id = 1): the token sealed with KEYS_SECRET, so
 * that every instance logs the same link; deleted when the first super_admin is created through /setup. The
 * /setup transaction locks this row, so two concurrent submissions cannot both create an admin.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table setup_token (
      id smallint primary key default 1 check (id = 1),
      token_sealed text not null,
      created_at timestamptz not null default now()
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table setup_token');
}
