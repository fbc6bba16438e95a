import type { Knex } from 'knex';

/**
 * CONTRACT §11: a pending TOTP enrolment belongs to the session that started it (and expires after 10 minutes, from
 * created_at). A confirmed TOTP has no pending session. Pending rows of sessions pruned away go with them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mfa_totp', (t) => {
    t.uuid('pending_session_id').references('sessions.id').onDelete('CASCADE');
  });
  // Enrolments pending before this migration belong to no session: they can no longer be confirmed.
  await knex('mfa_totp').whereNull('confirmed_at').delete();
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mfa_totp', (t) => {
    t.dropColumn('pending_session_id');
  });
}
