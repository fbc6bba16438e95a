import type { Knex } from 'knex';

/**
 * Issue 34, DPoP authorization code binding (RFC 9449 §10): an authorization request may name the thumbprint of the
 * client's DPoP key (`dpop_jkt`, or a DPoP proof at the PAR endpoint). The pending request (consent) and the code it
 * becomes remember it; the code is then exchanged only with a proof of that key. Nullable: rows written before, and
 * requests without it, are unbound as they were.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table oauth_authorization_requests add column dpop_jkt text');
  await knex.raw('alter table oauth_codes add column dpop_jkt text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table oauth_codes drop column dpop_jkt');
  await knex.raw('alter table oauth_authorization_requests drop column dpop_jkt');
}
