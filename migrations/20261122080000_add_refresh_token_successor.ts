import type { Knex } from 'knex';

/**
 * CONTRACT §8 grace window: a rotated refresh token remembers its successor, so that a concurrent or retried
 * presentation within REFRESH_REUSE_GRACE_S can be answered with that same successor (state in PostgreSQL only,
 * so it holds across instances).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refresh_tokens', (t) => {
    t.uuid('replaced_by');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refresh_tokens', (t) => {
    t.dropColumn('replaced_by');
  });
}
