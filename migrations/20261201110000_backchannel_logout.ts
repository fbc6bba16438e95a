import type { Knex } from 'knex';

/**
 * OpenID Connect Back-Channel Logout 1.0 (issue 34).
 *
 * - `oauth_clients.backchannel_logout_uri` / `backchannel_logout_session_required`: where a client is told that a
 *   session it holds ended.
 * - `sessions.browser_session_id`: the browser session that approved the code a session was exchanged for (the
 *   id_token's `sid`). Codes and pending authorizations carry it from /authorize to the token endpoint.
 * - `backchannel_logout_deliveries`: one row per (client, ended session), what the console shows; attempts are
 *   graphile-worker jobs like the webhooks' (services/webhooks/queue.ts).
 * - The one place where sessions end: an AFTER UPDATE OF revoked_at row trigger on `sessions`. Whichever code path
 *   revokes a session (sign-out, RP-initiated logout, sign-out everywhere, an admin, refresh-token reuse, password
 *   reset, deactivation, SCIM), in the same transaction the sessions exchanged under it are revoked too, and every
 *   client with a `backchannel_logout_uri` holding one of them gets a delivery and its job. A rolled-back revocation
 *   sends nothing; a committed one is never lost (the job is in the same transaction).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table oauth_clients
    add column backchannel_logout_uri text,
    add column backchannel_logout_session_required boolean not null default false`);
  await knex.raw('alter table sessions add column browser_session_id uuid');
  await knex.raw('create index sessions_browser_session_idx on sessions (browser_session_id) where browser_session_id is not null');
  await knex.raw('alter table oauth_codes add column browser_session_id uuid');
  await knex.raw('alter table oauth_authorization_requests add column browser_session_id uuid');

  await knex.raw(`
    create table backchannel_logout_deliveries (
      id bigint generated always as identity primary key,
      client_id text not null references oauth_clients (client_id) on delete cascade,
      user_id uuid not null,
      sid uuid not null,
      status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
      attempts integer not null default 0,
      last_attempt_at timestamptz,
      last_response_status integer,
      last_error text,
      next_attempt_at timestamptz default now(),
      delivered_at timestamptz,
      created_at timestamptz not null default now()
    )`);
  // Two sessions of one client under one browser session make one logout token while one is pending.
  await knex.raw(`create unique index backchannel_logout_deliveries_pending_idx on backchannel_logout_deliveries (client_id, sid)
    where status = 'pending'`);
  await knex.raw('create index backchannel_logout_deliveries_client_idx on backchannel_logout_deliveries (client_id, id)');
  await knex.raw('create index backchannel_logout_deliveries_created_idx on backchannel_logout_deliveries (created_at)');

  await knex.raw(`
    create function backchannel_logout_enqueue(p_delivery_id bigint, p_delay_seconds double precision)
    returns void language plpgsql as $$
    begin
      if to_regprocedure('graphile_worker.add_job(text,json,text,timestamptz,integer,text,integer,text[],text)') is null then
        return;
      end if;
      perform graphile_worker.add_job(
        'backchannel_logout_deliver',
        json_build_object('deliveryId', p_delivery_id),
        run_at => now() + make_interval(secs => p_delay_seconds),
        max_attempts => 10,
        job_key => 'backchannel-logout:' || p_delivery_id
      );
    end
    $$`);

  await knex.raw(`
    create function session_ended() returns trigger language plpgsql as $$
    declare
      d record;
    begin
      -- The sessions a code exchange opened under this browser session end with it (their rows fire this again).
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
    $$`);
  // Only a live session ending: one long expired is not signed out again by a sign-out everywhere.
  await knex.raw(`
    create trigger sessions_ended after update of revoked_at on sessions
    for each row when (old.revoked_at is null and new.revoked_at is not null and old.expires_at > new.revoked_at)
    execute function session_ended()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger sessions_ended on sessions');
  await knex.raw('drop function session_ended()');
  await knex.raw('drop function backchannel_logout_enqueue(bigint, double precision)');
  await knex.raw('drop table backchannel_logout_deliveries');
  await knex.raw('alter table oauth_authorization_requests drop column browser_session_id');
  await knex.raw('alter table oauth_codes drop column browser_session_id');
  await knex.raw('drop index sessions_browser_session_idx');
  await knex.raw('alter table sessions drop column browser_session_id');
  await knex.raw('alter table oauth_clients drop column backchannel_logout_session_required, drop column backchannel_logout_uri');
}
