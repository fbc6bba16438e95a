import { changedFields } from '../events';
import { randomUUID } from 'node:crypto';
import {
  deleteApiResource,
  findApiResourceById,
  insertApiResource,
  listOpenRegistrationResources,
  listApiResources,
  updateApiResource,
  type ApiResourceFields,
  type ApiResourceRow,
} from '../../db/repositories/api-resources.repo';
import { scopesGrantedByRoles } from '../../db/repositories/roles.repo';
import type { DbOrTrx } from '../../db';
import { mapDbError } from '../../db/pg-errors';
import { found, notFound } from '../../errors';
import type { ServiceContext } from '../context';
import { say } from '../../i18n';

const DUPLICATE = say('resourceTaken');

export async function createApiResource(ctx: ServiceContext, input: ApiResourceFields): Promise<ApiResourceRow> {
  const resource = await insertApiResource(ctx.db, { ...input, id: randomUUID(), now: ctx.clock.now() }).catch((err) => {
    throw mapDbError(err, DUPLICATE);
  });
  await ctx.events.record(ctx.db, { type: 'oauth.resource.created', subjectId: resource.id, detail: { identifier: resource.identifier } });
  return resource;
}

export async function listResources(ctx: ServiceContext): Promise<ApiResourceRow[]> {
  return listApiResources(ctx.db);
}

export async function getApiResource(ctx: ServiceContext, id: string): Promise<ApiResourceRow> {
  return found(await findApiResourceById(ctx.db, id), 'API resource');
}

export async function changeApiResource(ctx: ServiceContext, id: string, patch: Partial<ApiResourceFields>): Promise<ApiResourceRow> {
  const resource = await updateApiResource(ctx.db, id, patch, ctx.clock.now()).catch((err) => {
    throw mapDbError(err, DUPLICATE);
  });
  if (!resource) throw notFound('API resource');
  const fields = changedFields(patch);
  await ctx.events.record(ctx.db, { type: 'oauth.resource.changed', subjectId: id, detail: { identifier: resource.identifier, fields } });
  return resource;
}

/** Tokens already issued for it stop being active at introspection (the resource is gone). */
export async function removeApiResource(ctx: ServiceContext, id: string): Promise<ApiResourceRow> {
  const resource = found(await deleteApiResource(ctx.db, id), 'API resource');
  await ctx.events.record(ctx.db, { type: 'oauth.resource.deleted', subjectId: id, detail: { identifier: resource.identifier } });
  return resource;
}

/**
 * THE rule of role-based access (docs/rbac.md "Roles that grant API scopes"), applied wherever a token for an API is
 * issued to a user (token-response.ts withResourceToken: the authorization code, device and refresh grants): for a
 * resource with `role_based_access`, of the requested scopes that belong to the resource only those that the user's
 * active roles grant (global ones, and those scoped to this client) are kept; the others are dropped silently, as
 * unknown scopes are. Scopes that are not the resource's (openid, profile, …) are untouched, and so is every scope of
 * a resource without the flag. Machine-to-machine tokens (client_credentials) never come here.
 */
export async function narrowToRoleScopes(
  db: DbOrTrx,
  input: { resource: Pick<ApiResourceRow, 'id' | 'scopes' | 'roleBasedAccess'>; userId: string; clientId: string; scopes: string[] },
): Promise<string[]> {
  if (!input.resource.roleBasedAccess) return input.scopes;
  const ofResource = input.scopes.filter((s) => input.resource.scopes.includes(s));
  if (ofResource.length === 0) return input.scopes;
  const granted = new Set(await scopesGrantedByRoles(db, input.userId, input.resource.id, input.clientId));
  return input.scopes.filter((s) => !input.resource.scopes.includes(s) || granted.has(s));
}

/** CONTRACT §13: the APIs every dynamically registered client may ask tokens for. */
export async function openRegistrationResources(ctx: ServiceContext): Promise<ApiResourceRow[]> {
  return listOpenRegistrationResources(ctx.db);
}
