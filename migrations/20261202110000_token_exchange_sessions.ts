import type { Knex } from 'knex';

/**
 * RFC 8693 token exchange (issue 34, docs/token-exchange.md).
 *
 * - `sessions.parent_session_id`: an exchanged token gets a session of its own (the calling client's, so that client
 *   can revoke it without touching the subject's), born under the session of the subject token. It ends when that
 *   session ends, however it ends: `session_ended` below revokes the children in the same transaction (their rows fire
 *   the trigger again, so a chain of exchanges ends at once).
 * - A new nullable column and a replaced function: safe on a database with data (no rewrite, no backfill).
 */
const BODY = (children: boolean) => `
    create or replace function session_ended() returns trigger language plpgsql as $$
    declare
      d record;
    begin
      -- The sessions a code exchange opened under this browser session end with it (their rows fire this again).
      update sessions set revoked_at = new.revoked_at where browser_session_id = new.id and revoked_at is null;
      ${
        children
          ? `-- RFC 8693: the sessions of tokens exchanged from this session's tokens end with it.
      update sessions set revoked_at = new.revoked_at where parent_session_id = new.id and revoked_at is null;`
          : ''
      }
      if new.client_id is not null then
        for d in
          insert into backchannel_logout_deliveries (client_id, user_id, sid)
          select c.client_id, new.user_id, coalesce(new.browser_session_id, new.id)
            from oauth_clients c
           where c.client_id = new.client_id and c.is_active and c.backchannel_logout_uri is not null
          on conflict (client_id, sid) where status = 'pending' do nothing
          returning id
        loop
          perform backchannel_logout_enqueue(d.id, 0);
        end loop;
      end if;
      return null;
    end
    $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table sessions add column parent_session_id uuid references sessions (id) on delete cascade');
  await knex.raw('create index sessions_parent_session_idx on sessions (parent_session_id) where parent_session_id is not null');
  await knex.raw(BODY(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(BODY(false));
  await knex.raw('drop index sessions_parent_session_idx');
  await knex.raw('alter table sessions drop column parent_session_id');
}
