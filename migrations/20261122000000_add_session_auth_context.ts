import type { Knex } from 'knex';

/**
 * How and when the user behind a session last authenticated (CONTRACT §9 `auth_time`, §10 `amr`).
 * Carried unchanged through refresh rotation; a fresh sign-in creates a new session.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.timestamp('auth_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.specificType('amr', 'text[]').notNullable().defaultTo(knex.raw(`'{pwd}'::text[]`));
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.dropColumn('amr');
    t.dropColumn('auth_time');
  });
}
