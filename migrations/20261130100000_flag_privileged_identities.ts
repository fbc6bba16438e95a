import type { Knex } from 'knex';

/**
 * Issue 30 (mid-session review): identities linked to an administrator's account under the rules before the fourth
 * review (an automatic link by a `trust_email` provider, a pending link completed without confirmation) survive the
 * upgrade, and nothing tells a planted one apart from a real one. Every identity of an account holding admin rights
 * now is marked `needs_confirmation`: it signs nobody in until the account's owner, signed in another way, keeps it on
 * /account (or unlinks it). One audit row `auth.identity.flagged` per identity says so; docs/security.md explains.
 *
 * "Admin rights" is rbac-policy.ts `holdsAdminRights` as it stands: a global admin-tier role (super_admin, admin,
 * manager), or a global role granting any permission (every permission of this server is an admin permission),
 * assigned directly or through a SCIM group mapping (which never grants the global super_admin).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table user_identities add column needs_confirmation boolean not null default false');
  await knex.raw(`
    with held as (
      select ur.user_id, ur.role_id from user_roles ur
      union
      select gm.user_id, gr.role_id
        from scim_group_members gm
        join scim_group_roles gr on gr.group_id = gm.group_id
        join roles sr on sr.id = gr.role_id
       where not (sr.name = 'super_admin' and sr.application is null)
    ),
    privileged as (
      select distinct held.user_id
        from held
        join roles ro on ro.id = held.role_id and ro.application is null
       where ro.name in ('super_admin', 'admin', 'manager')
          or exists (select 1 from role_permissions rp where rp.role_id = ro.id)
    ),
    flagged as (
      update user_identities i set needs_confirmation = true
       where i.user_id in (select user_id from privileged)
      returning i.id, i.user_id, i.provider_id, i.subject
    )
    insert into audit_events (type, actor_id, subject_id, detail)
    select 'auth.identity.flagged', null, f.user_id::text,
           jsonb_build_object('identity_id', f.id, 'provider', p.slug, 'upstream_subject', f.subject,
                              'reason', 'privileged_account_linked_before_upgrade')
      from flagged f join identity_providers p on p.id = f.provider_id`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table user_identities drop column needs_confirmation');
}
