import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';

/** Permission catalogue of spec §2.9, seeded once. */
const PERMISSIONS: Array<[string, string]> = [
  ['users:read', 'List users and read user details, roles and permissions'],
  ['users:write', 'Create, invite and update users'],
  ['users:delete', 'Deactivate users'],
  ['users:manage_roles', 'Assign roles to users and remove them'],
  ['system:manage_users', 'List administrators'],
  ['system:manage_roles', 'List and manage roles'],
  ['oauth_clients:read', 'List OAuth clients and read their details'],
  ['oauth_clients:write', 'Create and update OAuth clients'],
  ['oauth_clients:rotate_secret', 'Rotate the secret of an OAuth client'],
  ['oauth_clients:delete', 'Deactivate OAuth clients'],
];

const ROLES: Array<{ name: string; description: string; permissions: (p: string) => boolean }> = [
  { name: 'super_admin', description: 'Holds every permission', permissions: () => true },
  {
    name: 'admin',
    description: 'Administers users, roles and OAuth clients',
    permissions: (p) => /^(users|system|oauth_clients):/.test(p),
  },
  { name: 'manager', description: 'Reads and updates users', permissions: (p) => p === 'users:read' || p === 'users:write' },
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary();
    // Stored trimmed and lower-cased: emails compare case-insensitively (CONTRACT §4).
    t.text('email').notNullable().unique();
    t.text('first_name').notNullable().defaultTo('');
    t.text('last_name').notNullable().defaultTo('');
    t.text('password_hash');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.boolean('email_verified').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_login_at', { useTz: true });
  });

  await knex.schema.createTable('permissions', (t) => {
    t.text('name').primary();
    t.text('description').notNullable().defaultTo('');
  });

  await knex.schema.createTable('roles', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    t.text('description').notNullable().defaultTo('');
    // null = a global role; otherwise the application the role is scoped to.
    t.text('application');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // Unique per application, with NULL (global) treated as one value.
  await knex.raw(`create unique index roles_name_application_unique on roles (name, coalesce(application, ''))`);

  await knex.schema.createTable('role_permissions', (t) => {
    t.uuid('role_id').notNullable().references('roles.id').onDelete('CASCADE');
    t.text('permission').notNullable().references('permissions.name').onDelete('CASCADE');
    t.primary(['role_id', 'permission']);
  });

  await knex.schema.createTable('user_roles', (t) => {
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.uuid('role_id').notNullable().references('roles.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'role_id']);
    t.index(['role_id']);
  });

  await knex.schema.createTable('oauth_clients', (t) => {
    t.text('client_id').primary();
    t.text('name').notNullable();
    // SHA-256 hex of the 256-bit secret; never bcrypt (CONTRACT §5).
    t.text('secret_hash').notNullable();
    t.jsonb('redirect_uris').notNullable().defaultTo('[]');
    t.jsonb('scopes').notNullable().defaultTo('[]');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('sessions', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    // null for first-party sign-ins; the OAuth client otherwise.
    t.text('client_id').references('oauth_clients.client_id').onDelete('CASCADE');
    t.text('scope');
    t.text('ip');
    t.text('user_agent');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.index(['user_id']);
    t.index(['client_id']);
    t.index(['expires_at']);
    t.index(['revoked_at']);
  });

  await knex.schema.createTable('refresh_tokens', (t) => {
    // The JWT's tokenId.
    t.uuid('id').primary();
    t.uuid('session_id').notNullable().references('sessions.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    // Set once when rotated: a second presentation is reuse (RFC 9700 §4.14.2).
    t.timestamp('used_at', { useTz: true });
    t.index(['session_id']);
    t.index(['expires_at']);
  });

  await knex.schema.createTable('login_failures', (t) => {
    t.text('email').primary();
    t.integer('failures').notNullable().defaultTo(0);
    t.timestamp('locked_until', { useTz: true });
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Counters idle for a day are pruned on this index.
    t.index(['updated_at']);
  });

  await knex.schema.createTable('oauth_authorization_requests', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('client_id').notNullable().references('oauth_clients.client_id').onDelete('CASCADE');
    t.text('redirect_uri').notNullable();
    t.text('scope').notNullable();
    t.text('state');
    t.text('code_challenge').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('consumed_at', { useTz: true });
    t.index(['expires_at']);
  });

  await knex.schema.createTable('oauth_codes', (t) => {
    t.text('code_hash').primary();
    t.text('client_id').notNullable().references('oauth_clients.client_id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('redirect_uri').notNullable();
    t.text('scope').notNullable();
    t.text('code_challenge').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    // The session the exchange created: a replayed code revokes it (RFC 6749 §4.1.2).
    t.uuid('session_id').references('sessions.id').onDelete('SET NULL');
    t.index(['expires_at']);
  });

  await knex.schema.createTable('oauth_grants', (t) => {
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('client_id').notNullable().references('oauth_clients.client_id').onDelete('CASCADE');
    t.text('scope').notNullable();
    t.timestamp('granted_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true });
    t.primary(['user_id', 'client_id']);
  });

  await knex.schema.createTable('email_tokens', (t) => {
    t.text('token_hash').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    // verify_email | set_password
    t.text('purpose').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.index(['user_id']);
    t.index(['expires_at']);
  });

  await knex.schema.createTable('login_tokens', (t) => {
    t.text('token_hash').primary();
    t.text('url').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.index(['expires_at']);
  });

  await knex('permissions').insert(PERMISSIONS.map(([name, description]) => ({ name, description })));
  for (const role of ROLES) {
    const id = randomUUID();
    await knex('roles').insert({ id, name: role.name, description: role.description });
    const granted = PERMISSIONS.map(([p]) => p).filter(role.permissions);
    await knex('role_permissions').insert(granted.map((permission) => ({ role_id: id, permission })));
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'login_tokens',
    'email_tokens',
    'oauth_grants',
    'oauth_codes',
    'oauth_authorization_requests',
    'login_failures',
    'refresh_tokens',
    'sessions',
    'oauth_clients',
    'user_roles',
    'role_permissions',
    'roles',
    'permissions',
    'users',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
