import type { Knex } from 'knex';

/**
 * Back-channel logout when a session row is deleted (issue 34, docs/backchannel-logout.md "When logout tokens are sent").
 *
 * The backchannel_logout migration made `revoked_at` the one place where sessions end. Rows can also go by DELETE: an
 * account deleted (SCIM `DELETE /Users`, whose sessions go by cascade), or any later path or an operator's SQL. A live
 * session deleted that way ends just as surely as a revoked one, so the same rule now runs for both: `session_ended()`
 * serves an AFTER DELETE row trigger as well as the AFTER UPDATE OF revoked_at one. No code path can forget it.
 *
 * Which deletions count: a row that was live (not revoked, not expired) when it went. Pruning deletes only sessions that
 * expired (an expiry is not a sign-out, as for revocation) or were revoked long ago (their clients were told then), so
 * it sends nothing. A client's sessions deleted with the client itself (the dynamic-registration prune) send nothing
 * either: the client row is gone within the same statement, so there is nobody left to tell.
 */
const SESSION_ENDED_V2 = `
  create or replace function session_ended() returns trigger language plpgsql as $$
  declare
    d record;
    s sessions;
    ended_at timestamptz;
  begin
    if tg_op = 'DELETE' then
      s := old;
      ended_at := now();
    else
      s := new;
      ended_at := new.revoked_at;
    end if;
    -- The sessions a code exchange opened under this browser session end with it (their rows fire this again).
    update sessions set revoked_at = ended_at where browser_session_id = s.id and revoked_at is null;
    if s.client_id is not null then
      for d in
        insert into backchannel_logout_deliveries (client_id, user_id, sid)
        select c.client_id, s.user_id, coalesce(s.browser_session_id, s.id)
          from oauth_clients c
         where c.client_id = s.client_id and c.is_active and c.backchannel_logout_uri is not null
        on conflict (client_id, sid) where status = 'pending' do nothing
        returning id
      loop
        perform backchannel_logout_enqueue(d.id, 0);
      end loop;
    end if;
    return null;
  end
  $$`;

/** The function as the backchannel_logout migration wrote it (for down). */
const SESSION_ENDED_V1 = `
  create or replace function session_ended() returns trigger language plpgsql as $$
  declare
    d record;
  begin
    update sessions set revoked_at = new.revoked_at where browser_session_id = new.id and revoked_at is null;
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
  await knex.raw(SESSION_ENDED_V2);
  await knex.raw(`
    create trigger sessions_deleted after delete on sessions
    for each row when (old.revoked_at is null and old.expires_at > now())
    execute function session_ended()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger sessions_deleted on sessions');
  await knex.raw(SESSION_ENDED_V1);
}
