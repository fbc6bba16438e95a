import type { Knex } from 'knex';

/**
 * CONTRACT §13: how a client came to exist. `admin` (the admin API and console: every client before issue 21),
 * `dynamic` (RFC 7591 registration) or `metadata_document` (a Client ID Metadata Document: the client_id is the
 * document's https URL, the row is written on first use and kept in step with the document).
 *
 * Written to hold whichever way the two halves of issue 21 land: the column is added only if the dynamic-registration
 * migration has not added it, and its check constraint (Postgres's default name for a column check) is replaced by
 * one that admits all three values.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table oauth_clients add column if not exists registration text not null default 'admin'`);
  await knex.raw('alter table oauth_clients drop constraint if exists oauth_clients_registration_check');
  await knex.raw(
    `alter table oauth_clients add constraint oauth_clients_registration_check
       check (registration in ('admin', 'dynamic', 'metadata_document'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`delete from oauth_clients where registration = 'metadata_document'`);
  await knex.raw('alter table oauth_clients drop constraint if exists oauth_clients_registration_check');
  await knex.raw(`alter table oauth_clients add constraint oauth_clients_registration_check check (registration in ('admin', 'dynamic'))`);
}
