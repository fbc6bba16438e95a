import type { Knex } from 'knex';

/**
 * Issue 13: the append-only audit trail of security events. A trigger refuses every UPDATE and every DELETE except
 * the retention pruning, which sets the transaction-local `sso.audit_prune` flag first; TRUNCATE is refused too.
 * Ids only grow (identity), so they double as the pagination cursor. No foreign keys: the trail outlives what it
 * names, and an event never fails because its subject went away.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table audit_events (
      id bigint generated always as identity primary key,
      occurred_at timestamptz not null default now(),
      type text not null,
      actor_id text,
      subject_id text,
      client_id text,
      ip text,
      user_agent text,
      request_id text,
      detail jsonb not null default '{}'::jsonb
    )`);
  await knex.raw('create index audit_events_occurred_at_idx on audit_events (occurred_at)');
  await knex.raw('create index audit_events_actor_idx on audit_events (actor_id, id)');
  await knex.raw('create index audit_events_subject_idx on audit_events (subject_id, id)');
  await knex.raw('create index audit_events_type_idx on audit_events (type, id)');
  await knex.raw(`
    create function audit_events_append_only() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' and current_setting('sso.audit_prune', true) = 'on' then
        return old;
      end if;
      raise exception 'audit_events is append-only (% refused)', tg_op using errcode = '42501';
    end
    $$`);
  await knex.raw(`
    create trigger audit_events_append_only before update or delete on audit_events
    for each row execute function audit_events_append_only()`);
  await knex.raw(`
    create trigger audit_events_no_truncate before truncate on audit_events
    for each statement execute function audit_events_append_only()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table audit_events');
  await knex.raw('drop function audit_events_append_only()');
}
