import type { Knex } from 'knex';

/**
 * People are shown by name (docs/operations.md, "Audit trail"): the email and name of the actor and of the subject as
 * they were when the event happened, written with the event (audit-events.repo.ts insertAuditEvents looks them up in
 * the same statement), so that a deleted or renamed account still shows who it was. `actor_name` exists already (a
 * SCIM connection's name); it now also holds a user actor's name.
 *
 * Existing rows are filled from the accounts that still exist. The trail is append-only: the trigger that refuses
 * UPDATE is switched off for this one statement, inside the migration's transaction.
 */
const UUID = `'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table audit_events add column actor_email text null`);
  await knex.raw(`alter table audit_events add column subject_email text null`);
  await knex.raw(`alter table audit_events add column subject_name text null`);
  await backfillAuditNames(knex);
}

/** Fills the names of rows without them from the accounts that still exist (exported for its test). */
export async function backfillAuditNames(knex: Knex): Promise<void> {
  await knex.raw(`alter table audit_events disable trigger audit_events_append_only`);
  await knex.raw(`
    update audit_events e
       set actor_email = u.email,
           actor_name = nullif(btrim(u.first_name || ' ' || u.last_name), '')
      from users u
     where e.actor_email is null and e.actor_type is null and e.actor_id ~ ${UUID}
       and u.id = case when e.actor_id ~ ${UUID} then e.actor_id::uuid end`);
  await knex.raw(`
    update audit_events e
       set subject_email = u.email,
           subject_name = nullif(btrim(u.first_name || ' ' || u.last_name), '')
      from users u
     where e.subject_email is null and e.subject_id ~ ${UUID}
       and u.id = case when e.subject_id ~ ${UUID} then e.subject_id::uuid end`);
  await knex.raw(`alter table audit_events enable trigger audit_events_append_only`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table audit_events drop column subject_name`);
  await knex.raw(`alter table audit_events drop column subject_email`);
  await knex.raw(`alter table audit_events drop column actor_email`);
}
