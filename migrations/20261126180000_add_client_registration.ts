import type { Knex } from 'knex';

/**
 * CONTRACT §13: how a client came to exist. `admin` (the admin API and console: every client before issue 21),
 * `dynamic` (RFC 7591 registration) or `metadata_document` (a Client ID Metadata Document: the client_id is the
 * document's https URL, the row is written on first use and kept in step with the document).
 *
 * `if not exists`: the dynamic-registration half of issue 21 needs the same column and may land in either order.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table oauth_clients add column if not exists registration text not null default 'admin'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table oauth_clients drop column if exists registration`);
}
