import type { Knex } from 'knex';

/**
 * Browser applications without a restart (docs/apps.md, "Browser applications and CORS"): a client's web origins.
 * - `allowed_origins`: what an administrator or the registration set; null means "the default" (the origins of a
 *   public client's redirect URIs, none for a confidential client).
 * - `cors_origins`: the origins in force (the explicit list, else the default), kept in step by every write so that a
 *   CORS preflight, which names no client, is one indexed lookup.
 */
function originsOfRedirectUris(uris: string[]): string[] {
  const origins = new Set<string>();
  for (const uri of uris) {
    try {
      const url = new URL(uri);
      if (url.protocol === 'https:' || url.protocol === 'http:') origins.add(url.origin);
    } catch {
      // not a URL: no origin
    }
  }
  return [...origins];
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table oauth_clients add column allowed_origins jsonb null`);
  await knex.raw(`alter table oauth_clients add column cors_origins jsonb not null default '[]'::jsonb`);
  const rows = (await knex('oauth_clients').where({ type: 'public' }).select('client_id', 'redirect_uris')) as Array<{
    client_id: string;
    redirect_uris: string[] | string;
  }>;
  for (const row of rows) {
    const uris = typeof row.redirect_uris === 'string' ? (JSON.parse(row.redirect_uris) as string[]) : row.redirect_uris;
    await knex('oauth_clients')
      .where({ client_id: row.client_id })
      .update({ cors_origins: JSON.stringify(originsOfRedirectUris(uris)) });
  }
  await knex.raw(`create index oauth_clients_cors_origins_idx on oauth_clients using gin (cors_origins jsonb_path_ops)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop index if exists oauth_clients_cors_origins_idx`);
  await knex.raw(`alter table oauth_clients drop column cors_origins`);
  await knex.raw(`alter table oauth_clients drop column allowed_origins`);
}
