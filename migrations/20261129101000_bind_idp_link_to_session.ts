import type { Knex } from 'knex';

/**
 * CONTRACT §23 (fourth review): a link begun from /account belongs to the session that began it. The callback links
 * only while that session is live, so signing out (everywhere) or a take-back stops a link already in progress.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idp_flows', (t) => {
    t.uuid('link_session_id').references('sessions.id').onDelete('CASCADE');
  });
  // Links begun before this migration belong to no session: they can no longer complete.
  await knex('idp_flows').whereNotNull('link_user_id').whereNull('used_at').update({ used_at: knex.fn.now() });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idp_flows', (t) => {
    t.dropColumn('link_session_id');
  });
}
