import type { Knex } from 'knex';

/**
 * The grant context on the OAuth session (docs/architecture.md, "The grant context"): the session a code or device
 * grant opens already keeps the context's scope, auth_time, amr and browser session; it now keeps the RFC 8707
 * resource too, so that a refresh issues its access token for the API the grant was for (an RFC 9068 JWT with that
 * `aud`), judged again by the resource resolver.
 *
 * Backfill: a session opened by a code or device code that named an API takes that API from the code (the code rows
 * keep the session they opened). Any other session keeps none, which is how it refreshed before. Safe on a database
 * with data: one nullable column and two UPDATEs.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.text('resource');
  });
  await knex.raw(`
    update sessions s set resource = c.resource
      from oauth_codes c
     where c.session_id = s.id and c.resource is not null and s.resource is null`);
  await knex.raw(`
    update sessions s set resource = d.resource
      from oauth_device_codes d
     where d.session_id = s.id and d.resource is not null and s.resource is null`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.dropColumn('resource');
  });
}
