import type { Knex } from 'knex';

/**
 * Sign-in by email (docs/passwords.md): one row per request, for an active account with a verified address. The link
 * token and the 6-digit code are stored as keyed hashes only; `browser_hash` is the hash of the random value the
 * requesting browser holds in a cookie (a link opened elsewhere asks for a confirmation first). A new request of the
 * same account burns the previous one; using the link or the code burns the row (one conditional UPDATE); five wrong
 * codes end it. Expired rows are pruned on the expiry index.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table email_sign_in_requests (
      id uuid primary key,
      user_id uuid not null references users(id) on delete cascade,
      token_hash text not null unique,
      code_hash text not null,
      browser_hash text,
      return_to text,
      failures integer not null default 0,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    )`);
  await knex.raw('create index email_sign_in_requests_expires_at on email_sign_in_requests (expires_at)');
  await knex.raw('create index email_sign_in_requests_user on email_sign_in_requests (user_id, created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists email_sign_in_requests');
}
