import type { Knex } from 'knex';

/**
 * Invitations are pending until the invited person sets a password (docs/rbac.md, "Invitations"): the time the
 * current invitation link stops working, null once a password is set (and for everyone not invited).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table users add column invitation_expires_at timestamptz null`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table users drop column invitation_expires_at`);
}
