import type { Knex } from 'knex';

/**
 * Token exchange (docs/token-exchange.md, docs/backchannel-logout.md): the session a token exchange opens for the
 * calling client is not a sign-in of that client. It copies its parent's browser session (so that it ends with it),
 * and `session_ended()` sent a back-channel logout token for that browser session's `sid` whenever such a session
 * ended: the subject's application revoking its grant, or the caller revoking its exchanged token, told the caller
 * that the person's browser session had ended while it was still live, and a caller that also signed the person in
 * signed them out. Now an exchanged session (`parent_session_id` set) ends its own children as before and sends no
 * logout token; a real end of the browser session still tells every application signed in under it.
 *
 * Replaces a function body only: safe on a database with data.
 */
const sessionEnded = (sendsFor: string) => `
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
    if ${sendsFor} then
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

export async function up(knex: Knex): Promise<void> {
  await knex.raw(sessionEnded('s.client_id is not null and s.parent_session_id is null'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(sessionEnded('s.client_id is not null'));
}
