import { changedFields } from '../events';
import { randomUUID } from 'node:crypto';
import {
  deleteApiResource,
  findApiResourceById,
  findApiResourceByIdentifier,
  insertApiResource,
  listApiResources,
  listOpenRegistrationResources,
  updateApiResource,
  type ApiResourceFields,
  type ApiResourceRow,
} from '../../db/repositories/api-resources.repo';
import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import { scopesGrantedByRoles } from '../../db/repositories/roles.repo';
import type { DbOrTrx } from '../../db';
import { mapDbError } from '../../db/pg-errors';
import { notFound, OAuthError } from '../../errors';
import type { ServiceContext } from '../context';
import { resourceAllowed } from '../../declarations/client-policy';
import { unionScopes } from './scopes';
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
  const resource = await findApiResourceById(ctx.db, id);
  if (!resource) throw notFound('API resource');
  return resource;
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
  const resource = await deleteApiResource(ctx.db, id);
  if (!resource) throw notFound('API resource');
  await ctx.events.record(ctx.db, { type: 'oauth.resource.deleted', subjectId: id, detail: { identifier: resource.identifier } });
  return resource;
}

/** RFC 8707 §2: an absolute URI without a fragment. */
export function isResourceIdentifier(value: string): boolean {
  if (value.length === 0 || value.length > 2048 || value.includes('#') || /[\s\x00-\x1f\x7f]/.test(value)) return false;
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * THE resource resolver (after node-oidc-provider's `resolveResource`), used by authorize, consent, device
 * authorization and the token endpoint: the API a grant is for (RFC 8707 `resource`), or undefined when none is named.
 * Not an absolute URI, not registered, or not allowed to the client (client-policy.ts resourceAllowed): invalid_target
 * (RFC 8707 §2), before anything is issued, or what `options.refuse` makes of the message (consent answers a request
 * whose API has since gone like an unknown request). `options.db`: read in the caller's transaction.
 */
export async function resolveTarget(
  ctx: ServiceContext,
  client: Pick<OAuthClientRow, 'allowedResources' | 'registration' | 'resources'>,
  resource: string | undefined,
  options: { db?: DbOrTrx; refuse?: (message: string) => Error } = {},
): Promise<ApiResourceRow | undefined> {
  if (resource === undefined) return undefined;
  const refuse = options.refuse ?? ((message: string) => new OAuthError('invalid_target', message));
  if (!isResourceIdentifier(resource)) throw refuse('resource must be an absolute URI without a fragment');
  const found = await resourceOfClient(ctx, client, resource, options.db);
  if (!found) throw refuse('resource is not a registered API');
  if (!resourceAllowed(client, found)) throw refuse('This client may not ask for tokens for this resource');
  return found;
}

/** CONTRACT §12: the scopes a client may ask for = its own ∪ the requested resource's. */
export function permittedScopes(client: Pick<OAuthClientRow, 'scopes'>, resource: Pick<ApiResourceRow, 'scopes'> | undefined): string[] {
  return resource ? unionScopes(client.scopes, resource.scopes) : [...client.scopes];
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

/**
 * An API resource by identifier: from those read with the client when it is one of its allowed APIs (findClientById,
 * the same statement as the client authentication: issue 33), else from the database.
 */
export async function resourceOfClient(
  ctx: ServiceContext,
  client: Pick<OAuthClientRow, 'resources'>,
  identifier: string,
  db: DbOrTrx = ctx.db,
): Promise<ApiResourceRow | undefined> {
  return client.resources?.find((r) => r.identifier === identifier) ?? findApiResourceByIdentifier(db, identifier);
}

export async function findResourceByIdentifier(ctx: ServiceContext, identifier: string): Promise<ApiResourceRow | undefined> {
  return findApiResourceByIdentifier(ctx.db, identifier);
}

/** CONTRACT §13: the APIs every dynamically registered client may ask tokens for. */
export async function openRegistrationResources(ctx: ServiceContext): Promise<ApiResourceRow[]> {
  return listOpenRegistrationResources(ctx.db);
}
