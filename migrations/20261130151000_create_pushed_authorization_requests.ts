import type { Knex } from 'knex';

/**
 * Issue 34, PAR (RFC 9126): a client may push its authorization request to POST /api/oauth/par first and then send
 * the browser to /api/oauth/authorize with the `request_uri` it got. The request is kept (only the SHA-256 of its
 * `request_uri`) for 60 seconds and used once: the authorization that uses it marks `used_at` in the statement that
 * checks it is unused. `require_pushed_authorization_requests` on a client (RFC 9126 §6) makes pushing mandatory for
 * it; the runtime setting of the same name makes it mandatory for every client.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table oauth_clients add column require_pushed_authorization_requests boolean not null default false');
  await knex.raw(`
    create table oauth_pushed_requests (
      request_uri_hash text primary key,
      client_id text not null references oauth_clients (client_id) on delete cascade,
      params jsonb not null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`);
  await knex.raw('create index oauth_pushed_requests_expires_at_idx on oauth_pushed_requests (expires_at)');
  await knex.raw('create index oauth_pushed_requests_client_id_idx on oauth_pushed_requests (client_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table oauth_pushed_requests');
  await knex.raw('alter table oauth_clients drop column require_pushed_authorization_requests');
}
