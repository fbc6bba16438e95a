import type { ApiResourceRow } from '../../db/repositories/api-resources.repo';
import { findApiResourceByIdentifier, listOpenRegistrationResources } from '../../db/repositories/api-resources.repo';
import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import type { DbOrTrx } from '../../db';
import { OAuthError } from '../../errors';
import type { ServiceContext } from '../context';
import { resourceAllowed } from '../../declarations/client-policy';
import { unionScopes } from './scopes';

/**
 * THE resource resolver (after node-oidc-provider's `resolveResource` and `getResourceServerInfo`): the one place an
 * RFC 8707 `resource` becomes the API a grant is for, its audience and the scopes the client may ask for with it.
 * Used by authorize (and PAR, which judges by authorize's rules), consent, device authorization and the /device
 * page, and the token endpoint's grants: authorization_code, refresh_token, device_code, client_credentials and token
 * exchange. A resource is an absolute URI without a fragment, a registered API, and allowed to the client
 * (client-policy.ts resourceAllowed); a grant's stored resource is judged again by the same rules when it is used.
 */

type ResolvingClient = Pick<OAuthClientRow, 'allowedResources' | 'registration' | 'resources'>;

/** Which resource is judged: one a request names, or one a grant stored when it began (its refusals say "no longer"). */
export type ResourceAsk = { named: string | undefined } | { granted: string | null };

export type ResourceVerdict =
  { ok: true; resource: ApiResourceRow | undefined } | { ok: false; error: 'invalid_target'; description: string };

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
 * The verdict on a resource, without throwing (a caller that must not roll back, such as a consumed code, answers it
 * itself). `undefined` resource: none was named or stored. `options.db`: read in the caller's transaction.
 */
export async function judgeResource(
  ctx: ServiceContext,
  client: ResolvingClient,
  ask: ResourceAsk,
  options: { db?: DbOrTrx } = {},
): Promise<ResourceVerdict> {
  const granted = 'granted' in ask;
  const identifier = granted ? (ask.granted ?? undefined) : ask.named;
  if (identifier === undefined) return { ok: true, resource: undefined };
  const refuse = (description: string): ResourceVerdict => ({ ok: false, error: 'invalid_target', description });
  if (!isResourceIdentifier(identifier)) return refuse('resource must be an absolute URI without a fragment');
  const found = await resourceOfClient(ctx, client, identifier, options.db);
  if (!found) return refuse(granted ? 'resource is no longer a registered API' : 'resource is not a registered API');
  if (!resourceAllowed(client, found)) {
    return refuse(
      granted ? 'This client may no longer ask for tokens for this resource' : 'This client may not ask for tokens for this resource',
    );
  }
  return { ok: true, resource: found };
}

/**
 * The API a request names (RFC 8707 `resource`), or undefined when none is named; a refusal is thrown: invalid_target
 * (RFC 8707 §2), before anything is issued, or what `options.refuse` makes of the message (consent answers a request
 * whose API has gone like an unknown request). With `fallback: 'only_allowed'`, a request naming none is for the
 * client's only allowed API when it has exactly one and it is registered (RFC 8707 §2: the server's default).
 */
export async function resolveResource(
  ctx: ServiceContext,
  client: ResolvingClient,
  resource: string,
  options?: ResolveOptions,
): Promise<ApiResourceRow>;
export async function resolveResource(
  ctx: ServiceContext,
  client: ResolvingClient,
  resource: string | undefined,
  options?: ResolveOptions,
): Promise<ApiResourceRow | undefined>;
export async function resolveResource(
  ctx: ServiceContext,
  client: ResolvingClient,
  resource: string | undefined,
  options: ResolveOptions = {},
): Promise<ApiResourceRow | undefined> {
  if (resource === undefined && options.fallback === 'only_allowed') {
    const [only, ...more] = client.allowedResources;
    return only !== undefined && more.length === 0 ? resourceOfClient(ctx, client, only, options.db) : undefined;
  }
  const verdict = await judgeResource(ctx, client, { named: resource }, options);
  if (!verdict.ok) throw options.refuse ? options.refuse(verdict.description) : new OAuthError(verdict.error, verdict.description);
  return verdict.resource;
}

interface ResolveOptions {
  db?: DbOrTrx;
  refuse?: (message: string) => Error;
  fallback?: 'only_allowed';
}

/** CONTRACT §12: the scopes a client may ask for with a resource = its own ∪ the resource's. */
export function permittedScopes(client: Pick<OAuthClientRow, 'scopes'>, resource: Pick<ApiResourceRow, 'scopes'> | undefined): string[] {
  return resource ? unionScopes(client.scopes, resource.scopes) : [...client.scopes];
}

/**
 * The scopes any of a client's grants may carry (the refresh grant narrows to them, CONTRACT §8): its own and those of
 * every API it is allowed (CONTRACT §12, §13). Only a client allowed APIs reads them: a client without any makes no
 * query (issue 10).
 */
export async function grantableScopes(ctx: ServiceContext, client: OAuthClientRow): Promise<string[]> {
  if (client.allowedResources.length === 0 && client.registration !== 'dynamic') return client.scopes;
  let scopes: string[] = [...client.scopes];
  for (const identifier of client.allowedResources) {
    const resource = await resourceOfClient(ctx, client, identifier);
    if (resource) scopes = unionScopes(scopes, resource.scopes);
  }
  if (client.registration === 'dynamic') {
    for (const resource of await listOpenRegistrationResources(ctx.db)) scopes = unionScopes(scopes, resource.scopes);
  }
  return scopes;
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
