import type { Knex } from 'knex';

/**
 * Issue 26 (CONTRACT §17): webhook subscriptions and their deliveries, fed by the audit trail itself.
 *
 * - `webhook_subscriptions`: URL, event patterns (exact type, `prefix.*` or `*`), the signing secret sealed with
 *   KEYS_SECRET (lib/sealed.ts; signing needs the plaintext, so it cannot be hashed), and the previous secret for a
 *   day after a rotation (both signatures are sent meanwhile).
 * - `webhook_deliveries`: one row per (subscription, audit event), what the admin API shows and replays.
 * - An AFTER INSERT trigger on `audit_events` (statement level, so a batch insert costs one statement) creates the
 *   delivery rows of every enabled matching subscription and enqueues one graphile-worker job per delivery in the
 *   same transaction: a delivery exists if and only if its audit row committed, whichever code path wrote the row.
 * - `webhook_enqueue()` is the one place that talks to graphile-worker's SQL API (`graphile_worker.add_job`). The
 *   queue's schema is installed by the server at boot (services/webhooks/queue.ts); until it exists (a database only
 *   migrated by the CLI so far) deliveries are recorded but not enqueued, and audit writes never fail because of it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table webhook_subscriptions (
      id uuid primary key,
      url text not null,
      events text[] not null,
      enabled boolean not null default true,
      description text not null default '',
      secret_sealed text not null,
      previous_secret_sealed text,
      previous_secret_expires_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
  await knex.raw(`
    create table webhook_deliveries (
      id bigint generated always as identity primary key,
      subscription_id uuid not null references webhook_subscriptions (id) on delete cascade,
      event_id bigint not null,
      event_type text not null,
      status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
      attempts integer not null default 0,
      last_attempt_at timestamptz,
      last_response_status integer,
      last_response_excerpt text,
      last_error text,
      next_attempt_at timestamptz default now(),
      delivered_at timestamptz,
      created_at timestamptz not null default now(),
      unique (subscription_id, event_id)
    )`);
  await knex.raw('create index webhook_deliveries_subscription_idx on webhook_deliveries (subscription_id, id)');
  // The backlog gauge (oldest due delivery) and retention pruning.
  await knex.raw(`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending'`);
  await knex.raw('create index webhook_deliveries_created_idx on webhook_deliveries (created_at)');

  await knex.raw(`
    create function webhook_enqueue(p_delivery_id bigint, p_subscription_id uuid, p_delay_seconds double precision)
    returns void language plpgsql as $$
    begin
      if to_regprocedure('graphile_worker.add_job(text,json,text,timestamptz,integer,text,integer,text[],text)') is null then
        return;
      end if;
      -- Four lanes per subscription (named queues run one job at a time): one slow receiver holds at most four
      -- workers, whatever its backlog. The job key makes a delivery's job unique: re-enqueueing moves it.
      perform graphile_worker.add_job(
        'webhook_deliver',
        json_build_object('deliveryId', p_delivery_id),
        queue_name => 'webhook:' || p_subscription_id || ':' || (p_delivery_id % 4),
        run_at => now() + make_interval(secs => p_delay_seconds),
        max_attempts => 10,
        job_key => 'webhook-delivery:' || p_delivery_id
      );
    end
    $$`);

  await knex.raw(`
    create function webhook_fan_out() returns trigger language plpgsql as $$
    declare
      d record;
    begin
      for d in
        insert into webhook_deliveries (subscription_id, event_id, event_type)
        select s.id, e.id, e.type
        from new_events e
        join webhook_subscriptions s on s.enabled and exists (
          select 1 from unnest(s.events) p
          where p = '*' or p = e.type or (right(p, 2) = '.*' and starts_with(e.type, left(p, -1)))
        )
        returning id, subscription_id
      loop
        perform webhook_enqueue(d.id, d.subscription_id, 0);
      end loop;
      return null;
    end
    $$`);
  await knex.raw(`
    create trigger audit_events_webhook_fan_out after insert on audit_events
    referencing new table as new_events
    for each statement execute function webhook_fan_out()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger audit_events_webhook_fan_out on audit_events');
  await knex.raw('drop function webhook_fan_out()');
  await knex.raw('drop function webhook_enqueue(bigint, uuid, double precision)');
  await knex.raw('drop table webhook_deliveries');
  await knex.raw('drop table webhook_subscriptions');
}
