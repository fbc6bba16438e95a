import type { Knex } from 'knex';

/**
 * RFC 8693 token exchange (issue 34, docs/token-exchange.md).
 *
 * - `sessions.parent_session_id`: an exchanged token gets a session of its own (the calling client's, so that client
 *   can revoke it without touching the subject's), born under the session of the subject token.
 * - It ends when that session ends, however it ends: a revocation fires `session_children_ended` below, which revokes
 *   the children in the same transaction (their rows fire it again, so a chain of exchanges ends at once; each child's
 *   own `session_ended` trigger does the rest, back-channel logout included); a deleted parent takes its children
 *   with it (on delete cascade). A trigger of its own, so that `session_ended` stays the back-channel logout's.
 * - A new nullable column, a function and a trigger: safe on a database with data (no rewrite, no backfill).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table sessions add column parent_session_id uuid references sessions (id) on delete cascade');
  await knex.raw('create index sessions_parent_session_idx on sessions (parent_session_id) where parent_session_id is not null');
  await knex.raw(`
    create function session_children_ended() returns trigger language plpgsql as $$
    begin
      update sessions set revoked_at = new.revoked_at where parent_session_id = new.id and revoked_at is null;
      return null;
    end
    $$`);
  await knex.raw(`
    create trigger sessions_children_ended after update of revoked_at on sessions
    for each row when (old.revoked_at is null and new.revoked_at is not null)
    execute function session_children_ended()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger sessions_children_ended on sessions');
  await knex.raw('drop function session_children_ended()');
  await knex.raw('drop index sessions_parent_session_idx');
  await knex.raw('alter table sessions drop column parent_session_id');
}
