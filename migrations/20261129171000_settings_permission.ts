import type { Knex } from 'knex';

/**
 * Fourth review (settings, docs/settings.md): permission `system:manage_settings`. Changing a security-sensitive
 * runtime setting (the SMTP server, the sender, MFA for administrators, credentialed CORS origins, private webhook
 * targets, registration modes, the password policy…) lets whoever holds it read set-password mails or weaken the
 * server, so it is not part of `system:manage_users`. Only the global super_admin role gets it here (super_admin holds
 * every permission anyway); no other role, `admin` included, gets it by a migration: an operator grants it on purpose.
 */
const PERMISSION = 'system:manage_settings';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`insert into permissions (name, description) values (?, ?) on conflict (name) do nothing`, [
    PERMISSION,
    'Change security-sensitive runtime settings (SMTP, sender, MFA for admins, origins, registration) and send test mails',
  ]);
  await knex.raw(
    `insert into role_permissions (role_id, permission)
     select id, ? from roles where name = 'super_admin' and application is null
     on conflict do nothing`,
    [PERMISSION],
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`delete from role_permissions where permission = ?`, [PERMISSION]);
  await knex.raw(`delete from permissions where name = ?`, [PERMISSION]);
}
