import { randomBytes, randomUUID } from 'node:crypto';
import { makeSignedInUser } from './factories';
import type { TestApp } from './test-app';

/** Inserts a role directly (global unless `application` is given) with exactly these permissions. */
export async function makeRole(
  t: TestApp,
  options: { name?: string; application?: string | null; permissions?: string[]; isActive?: boolean; description?: string } = {},
): Promise<{ id: string; name: string; application: string | null }> {
  const id = randomUUID();
  const name = options.name ?? `role-${randomBytes(4).toString('hex')}`;
  const application = options.application ?? null;
  await t.db('roles').insert({
    id,
    name,
    application,
    description: options.description ?? '',
    is_active: options.isActive ?? true,
  });
  const permissions = options.permissions ?? [];
  if (permissions.length > 0) {
    await t.db('role_permissions').insert(permissions.map((permission) => ({ role_id: id, permission })));
  }
  return { id, name, application };
}

export async function roleIdByName(t: TestApp, name: string, application: string | null = null): Promise<string> {
  const row = await t.db('roles').where({ name, application }).first('id');
  if (!row) throw new Error(`no role ${name}`);
  return row.id as string;
}

/**
 * A signed-in user holding exactly `permissions` through a fresh global role (no admin-tier role), so a test
 * proves the permission itself opens the door.
 */
export async function makeUserWithPermissions(t: TestApp, permissions: string[], application: string | null = null) {
  const signedIn = await makeSignedInUser(t);
  const role = await makeRole(t, { permissions, application });
  await t.db('user_roles').insert({ user_id: signedIn.user.id, role_id: role.id });
  return { ...signedIn, role };
}

/** Every permission string of spec §2.9, CONTRACT §23's system:manage_identity_providers and system:manage_settings (docs/settings.md). */
export const CATALOGUE = [
  'users:read',
  'users:write',
  'users:delete',
  'users:manage_roles',
  'system:manage_users',
  'system:manage_roles',
  'oauth_clients:read',
  'oauth_clients:write',
  'oauth_clients:rotate_secret',
  'oauth_clients:delete',
  'system:manage_identity_providers',
  'system:manage_settings',
] as const;
