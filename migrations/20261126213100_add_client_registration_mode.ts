import type { Knex } from 'knex';

/**
 * CONTRACT §13: the CLIENT_REGISTRATION mode a dynamic client registered under. An RFC 7592 update is judged by the
 * stricter of that mode and the current one, so that after an operator moves from `open` to `token` a client that
 * registered openly cannot give itself what only an initial access token may (the device grant, `read`/`write`/`admin`,
 * private-use or plain-http redirect URIs). Existing dynamic clients take the mode their `oauth.client.registered`
 * audit event names; without one, a confidential client can only have come from `token`, a public one is taken as
 * `open` (the stricter reading).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table oauth_clients add column registration_mode text check (registration_mode in ('token', 'open'))`);
  await knex.raw(
    `update oauth_clients c set registration_mode = e.detail->>'mode'
       from audit_events e
      where c.registration = 'dynamic' and e.type = 'oauth.client.registered' and e.client_id = c.client_id
        and e.detail->>'mode' in ('token', 'open')`,
  );
  await knex.raw(
    `update oauth_clients set registration_mode = case when type = 'confidential' then 'token' else 'open' end
      where registration = 'dynamic' and registration_mode is null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table oauth_clients drop column registration_mode');
}
