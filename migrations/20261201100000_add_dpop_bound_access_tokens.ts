import type { Knex } from 'knex';

/**
 * Issue 34, DPoP (RFC 9449): a client, or an API resource, may require every access token issued for it to be bound
 * to a DPoP key (`dpop_bound_access_tokens`, RFC 9449 §5.2 for clients). A token request without a proof is then
 * refused. Both default to false, so nothing changes for a client or API registered before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table oauth_clients add column dpop_bound_access_tokens boolean not null default false');
  await knex.raw('alter table api_resources add column dpop_bound_access_tokens boolean not null default false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table api_resources drop column dpop_bound_access_tokens');
  await knex.raw('alter table oauth_clients drop column dpop_bound_access_tokens');
}
