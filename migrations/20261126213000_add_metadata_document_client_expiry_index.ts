import type { Knex } from 'knex';

/**
 * CONTRACT §13 abuse limit for Client ID Metadata Documents: an authorization request with a new document URL writes
 * a client row before anyone signs in, so the prune job deletes metadata-document clients unused for 30 days, as it
 * does dynamic ones (a deactivated one is kept: deleting it would let the next request write it afresh, active). This
 * is the index of that scan, as oauth_clients_dynamic_last_use is for dynamic clients.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `create index oauth_clients_metadata_document_last_use on oauth_clients ((coalesce(last_used_at, created_at)))
      where registration = 'metadata_document' and is_active`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index oauth_clients_metadata_document_last_use');
}
