import type { Knex } from 'knex';

/**
 * Issue 32 (item 4): the stored permission descriptions say what each permission really guards, as read from the route
 * declarations (`system:manage_users` was "List administrators", yet it also guards the audit log, webhooks, SCIM
 * connections and the settings). A description is replaced only while it is still the text an earlier migration
 * seeded, so an operator's own wording is kept. The console shows the same sentences from its catalogue (German too).
 */
const DESCRIPTIONS: Array<[name: string, seeded: string, accurate: string]> = [
  [
    'users:read',
    'List users and read user details, roles and permissions',
    "List and export users; read a user's details, roles, permissions, sessions, second factors and linked identities",
  ],
  [
    'users:write',
    'Create, invite and update users',
    "Invite, create, import and update users; resend invitations and set-password links; end a user's sessions and reset second factors",
  ],
  ['users:delete', 'Deactivate users', 'Deactivate users'],
  ['users:manage_roles', 'Assign roles to users and remove them', 'Assign roles to users and remove them; map SCIM groups to roles'],
  [
    'system:manage_users',
    'List administrators',
    'List administrators; read the audit log; manage webhooks and SCIM connections; read and change settings (the sensitive ones also need system:manage_settings)',
  ],
  [
    'system:manage_roles',
    'List and manage roles',
    'List the active roles (GET /api/users/roles/list); creating and changing roles needs the super_admin role',
  ],
  [
    'oauth_clients:read',
    'List OAuth clients and read their details',
    'List applications, API resources, SAML applications and registration tokens and read their details',
  ],
  [
    'oauth_clients:write',
    'Create and update OAuth clients',
    'Create and update applications, API resources, SAML applications and registration tokens, and delete the last three',
  ],
  ['oauth_clients:rotate_secret', 'Rotate the secret of an OAuth client', "Rotate an application's client secret"],
  ['oauth_clients:delete', 'Deactivate OAuth clients', 'Deactivate and re-activate applications'],
];

export async function up(knex: Knex): Promise<void> {
  for (const [name, seeded, accurate] of DESCRIPTIONS) {
    await knex.raw(`update permissions set description = ? where name = ? and description = ?`, [accurate, name, seeded]);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [name, seeded, accurate] of DESCRIPTIONS) {
    await knex.raw(`update permissions set description = ? where name = ? and description = ?`, [seeded, name, accurate]);
  }
}
