import type { Knex } from 'knex';

/**
 * CONTRACT §23 (fourth review, federation):
 * - permission `system:manage_identity_providers`: configuring upstream identity providers (and `trust_email` above
 *   all) lets whoever holds it sign in as anyone whose address such a provider asserts, so it is its own permission.
 *   Only the global super_admin role gets it here (super_admin holds every permission anyway); no other admin-tier
 *   role, `admin` included, gets it by a migration: an operator grants it on purpose.
 * - user_identities.issuer: an identity is keyed by (provider, issuer or GitHub base URL, subject), so that changing
 *   a provider's issuer never carries the links made at the old one over. Stored identities take their provider's
 *   current value. idp_pending_links carries it too, so a link proved later is the identity that was asserted.
 */
const PERMISSION = 'system:manage_identity_providers';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`insert into permissions (name, description) values (?, ?) on conflict (name) do nothing`, [
    PERMISSION,
    'Configure identity providers (upstream sign-in) and whether their email addresses are trusted',
  ]);
  await knex.raw(
    `insert into role_permissions (role_id, permission)
     select id, ? from roles where name = 'super_admin' and application is null
     on conflict do nothing`,
    [PERMISSION],
  );

  const issuerOf = `case when p.type = 'github' then p.base_url else p.issuer end`;
  await knex.raw('alter table user_identities add column issuer text');
  await knex.raw(`update user_identities i set issuer = ${issuerOf} from identity_providers p where p.id = i.provider_id`);
  // A provider row always has one of the two; an empty string keeps the rare broken row distinct from every real one.
  await knex.raw(`update user_identities set issuer = '' where issuer is null`);
  await knex.raw('alter table user_identities alter column issuer set not null');
  await knex.raw('alter table user_identities drop constraint user_identities_provider_id_subject_key');
  await knex.raw(
    'alter table user_identities add constraint user_identities_provider_issuer_subject_key unique (provider_id, issuer, subject)',
  );

  await knex.raw('alter table idp_pending_links add column issuer text');
  await knex.raw(`update idp_pending_links l set issuer = ${issuerOf} from identity_providers p where p.id = l.provider_id`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table idp_pending_links drop column issuer');
  await knex.raw('alter table user_identities drop constraint user_identities_provider_issuer_subject_key');
  await knex.raw(
    'delete from user_identities a using user_identities b where a.provider_id = b.provider_id and a.subject = b.subject and a.created_at > b.created_at',
  );
  await knex.raw('alter table user_identities add constraint user_identities_provider_id_subject_key unique (provider_id, subject)');
  await knex.raw('alter table user_identities drop column issuer');
  await knex.raw(`delete from role_permissions where permission = ?`, [PERMISSION]);
  await knex.raw(`delete from permissions where name = ?`, [PERMISSION]);
}
