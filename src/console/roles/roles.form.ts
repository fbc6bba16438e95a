import { z } from 'zod';
import type { Role } from '../../wire/rbac/rbac.schemas';
import type { RoleValues } from '../../views/console/pages';
import { formMapping, list, text } from '../action';

/** The role form (CONTRACT §6): its fields, as the API's bodies and from its wire shape. */
export const roleForm = z.object({
  name: text(200),
  description: text(600),
  application: text(200),
  permissions: list(),
  api_scopes: list(),
});
type RoleForm = z.output<typeof roleForm>;

/** A checkbox's value `<resource identifier> <scope>` (an identifier is a URI and a scope a token: no spaces) as the API's entry. */
const apiScopesOf = (values: readonly string[]) =>
  values.map((v) => {
    const at = v.lastIndexOf(' ');
    return { resource: v.slice(0, at), scope: v.slice(at + 1) };
  });

export const createBody = formMapping({
  form: roleForm,
  input: (f) => ({ ...f, application: f.application.trim() || undefined, api_scopes: apiScopesOf(f.api_scopes) }),
  field: 'name',
});

/**
 * The update's body: a name or application only when changed (built-in roles keep their names; a global role has no
 * application field), and no permissions for the global super_admin (it holds them all).
 */
export const changesOf = ({ name, description, application, permissions, api_scopes }: RoleForm, role: Role) => ({
  ...(name === role.name ? {} : { name }),
  ...(role.application !== null && application.trim() !== role.application ? { application: application.trim() } : {}),
  description,
  ...(role.name === 'super_admin' && role.application === null ? {} : { permissions }),
  api_scopes: apiScopesOf(api_scopes),
});

export const valuesOf = (r?: Role): RoleValues => ({
  name: r?.name ?? '',
  description: r?.description ?? '',
  application: r?.application ?? '',
  permissions: r?.permissions ?? [],
  api_scopes: r?.api_scopes.map((a) => `${a.resource} ${a.scope}`) ?? [],
});
