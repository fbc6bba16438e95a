import type { Knex } from 'knex';

/**
 * CONTRACT §23 "Grants are bound to what was consented" (issue 30, fourth review): a grant records the API resources
 * (RFC 8707 identifiers, CONTRACT §12) and the redirect URIs the person consented to.
 *
 * Backfill: none. Existing grants get empty lists, because nothing recorded what the person saw: a grant made before
 * this migration was never shown an API, and the silent path that could have issued API tokens under it is exactly what
 * this closes (reading the resources of past codes back would launder that). So an existing grant still covers
 * sign-in with its scopes, and the first request of an app for an API token (authorize, code exchange or refresh
 * naming a resource) shows the consent page once, naming the API; a self-registered app's first authorization after
 * the upgrade shows it once for its redirect URI.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `alter table oauth_grants
       add column resources jsonb not null default '[]'::jsonb,
       add column redirect_uris jsonb not null default '[]'::jsonb`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table oauth_grants drop column resources, drop column redirect_uris');
}
