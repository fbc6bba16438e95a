import type { Request } from 'express';
import { z } from 'zod';
import { SCIM_MEDIA_TYPE, ScimError, unauthorized } from '../../errors';
import { jsonDocument, type Document } from '../../http/outcome';
import type { ScimConnectionRow } from '../../db/repositories/scim.repo';
import type { ServiceContext } from '../../services/context';
import { resourceTypes, schemas, serviceProviderConfig } from '../../services/scim/discovery';
import { attributeList, metaOf, project, SCHEMA, type Resource } from '../../services/scim/resources';
import * as groups from '../../services/scim/scim-groups.service';
import * as users from '../../services/scim/scim-users.service';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';

/**
 * /scim/v2 (CONTRACT §20, RFC 7644; docs/scim.md): Users, Groups and the discovery documents, for the Bearer token of
 * a SCIM connection (`auth: 'scim'`). Mounted in the SCIM scope (src/app.ts), which parses `application/scim+json`
 * and answers every error in the SCIM error schema. Kept out of the OpenAPI document: the protocol describes itself
 * (`/Schemas`, `/ResourceTypes`, `/ServiceProviderConfig`).
 */

/** Page size when `count` is absent, and the most one page holds (ServiceProviderConfig `filter.maxResults`). */
const DEFAULT_COUNT = 100;
const MAX_COUNT = 1000;

const invalidQuery = (issues: z.core.$ZodIssue[]) =>
  new ScimError('validation_error', `${issues[0]?.path.join('.') || 'query'}: ${issues[0]?.message ?? 'invalid'}`, 'invalidValue');

const intParam = z
  .string()
  .regex(/^-?\d{1,9}$/, 'must be an integer')
  .transform(Number);

/** RFC 7644 §3.4.2.4: startIndex below 1 is 1; count below 0 is 0; above the maximum, the maximum. */
const listQuery = z.object({
  filter: z.string().optional(),
  startIndex: intParam.optional().transform((v) => Math.max(1, v ?? 1)),
  count: intParam.optional().transform((v) => Math.min(MAX_COUNT, Math.max(0, v ?? DEFAULT_COUNT))),
  attributes: z.string().max(2000).optional(),
  excludedAttributes: z.string().max(2000).optional(),
});

const projectionQuery = listQuery.pick({ attributes: true, excludedAttributes: true });
type ListQuery = z.output<typeof listQuery>;

/**
 * `POST /Users/.search`, `POST /Groups/.search` (RFC 7644 §3.4.3): the query of a GET in a body, so that a filter
 * never lands in a URL (and its logs). `attributes` / `excludedAttributes` are arrays here; `sortBy` / `sortOrder` are
 * accepted and ignored (sort is advertised as unsupported, RFC 7644 §3.4.2.3). Read into the GET's query.
 */
const SEARCH_REQUEST = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
const attributeArray = z.array(z.string().max(200), { error: 'must be an array of attribute names' }).max(100);
const searchInt = z.number({ error: 'must be an integer' }).int('must be an integer');
const searchBody = z
  .object({
    schemas: z.array(z.string(), { error: `must be ["${SEARCH_REQUEST}"]` }).refine((v) => v.includes(SEARCH_REQUEST), {
      message: `must be ["${SEARCH_REQUEST}"]`,
    }),
    filter: z.string({ error: 'must be a string' }).optional(),
    startIndex: searchInt.optional(),
    count: searchInt.optional(),
    attributes: attributeArray.optional(),
    excludedAttributes: attributeArray.optional(),
    sortBy: z.string().max(200).optional(),
    sortOrder: z.enum(['ascending', 'descending']).optional(),
  })
  .transform((b): ListQuery => ({
    filter: b.filter,
    startIndex: Math.max(1, b.startIndex ?? 1),
    count: Math.min(MAX_COUNT, Math.max(0, b.count ?? DEFAULT_COUNT)),
    attributes: b.attributes?.join(','),
    excludedAttributes: b.excludedAttributes?.join(','),
  }));
/** A malformed search body is `invalidSyntax` (a query parameter's is `invalidValue`). */
const invalidSearch = (issues: z.core.$ZodIssue[], where: 'params' | 'query' | 'body') =>
  where === 'body'
    ? new ScimError('validation_error', `${issues[0]?.path.join('.') || 'body'}: ${issues[0]?.message ?? 'invalid'}`, 'invalidSyntax')
    : invalidQuery(issues);
const idParams = z.object({ id: z.string().max(100) });
const anyBody = z.unknown();

function connectionOf(req: Request) {
  if (!req.scimConnection) throw unauthorized('A SCIM connection token is required');
  return req.scimConnection;
}

/**
 * A SCIM answer (RFC 7644 §3.1): `application/scim+json`, the ETag of a single resource (the whole one when
 * projected), its Location when created.
 */
function scim(status: number, body: Resource, options: { etag?: true | Resource; location?: boolean } = {}): Document {
  const version = options.etag ? metaOf(options.etag === true ? body : options.etag).version : undefined;
  const location = options.location ? metaOf(body).location : undefined;
  return jsonDocument(status, SCIM_MEDIA_TYPE, body).withHeaders({
    ...(version ? { ETag: version } : {}),
    ...(location ? { Location: location } : {}),
  });
}

function listResponse(page: users.ScimPage, query: ListQuery, coreUrn: string): Resource {
  const attributes = attributeList(query.attributes, coreUrn);
  const excluded = attributeList(query.excludedAttributes, coreUrn);
  return {
    schemas: [SCHEMA.list],
    totalResults: page.total,
    startIndex: page.startIndex,
    itemsPerPage: page.resources.length,
    Resources: page.resources.map((r) => project(r, attributes, excluded)),
  };
}

function projected(resource: Resource, query: z.output<typeof projectionQuery>, coreUrn: string): Resource {
  return project(resource, attributeList(query.attributes, coreUrn), attributeList(query.excludedAttributes, coreUrn));
}

/** A SCIM resource type's service (Users, Groups) and the summaries of its routes. */
interface ResourceType {
  service: {
    create: (ctx: ServiceContext, connection: ScimConnectionRow, body: unknown) => Promise<Resource>;
    get: (ctx: ServiceContext, connection: ScimConnectionRow, id: string) => Promise<Resource>;
    replace: users.ScimWrite;
    patch: users.ScimWrite;
    remove: (ctx: ServiceContext, connection: ScimConnectionRow, id: string, ifMatch: string | undefined) => Promise<void>;
  };
  says: Record<'list' | 'search' | 'create' | 'get' | 'replace' | 'patch' | 'remove', string>;
}

export function createScimRouter(deps: RouteDeps) {
  const app = deps.ctx;
  const base = () => app.config.baseUrl;
  const common = { auth: 'scim', document: false, cors: false, noStore: true, invalid: invalidQuery } as const;
  const list = (items: Resource[]): Resource => ({
    schemas: [SCHEMA.list],
    totalResults: items.length,
    startIndex: 1,
    itemsPerPage: items.length,
    Resources: items,
  });
  const listUsers = async (ctx: ServiceContext, query: ListQuery, req: Request): Promise<Document> => {
    const page = await users.listUsers(ctx, connectionOf(req), query);
    return scim(200, listResponse(page, query, SCHEMA.user));
  };
  const listGroups = async (ctx: ServiceContext, query: ListQuery, req: Request): Promise<Document> => {
    const excluded = attributeList(query.excludedAttributes, SCHEMA.group) ?? [];
    const attributes = attributeList(query.attributes, SCHEMA.group);
    const withMembers = !excluded.includes('members') && (!attributes?.length || attributes.some((a) => a.startsWith('members')));
    const page = await groups.listGroups(ctx, connectionOf(req), { ...query, withMembers });
    return scim(200, listResponse(page, query, SCHEMA.group));
  };
  const search = { ...common, method: 'post', body: searchBody, invalid: invalidSearch } as const;
  const byId = (items: Resource[], id: string, what: string): Resource => {
    const found = items.find((r) => r.id === id);
    if (!found) throw new ScimError('not_found', `${what} not found`);
    return found;
  };

  /** The routes of one resource type (RFC 7644 §3): list, search, create, read, replace, patch and delete. */
  const resourceRoutes = (
    path: string,
    coreUrn: string,
    listed: (ctx: ServiceContext, query: ListQuery, req: Request) => Promise<Document>,
    of: ResourceType,
  ) => {
    const { service, says } = of;
    const one = { ...common, path: `${path}/:id`, params: idParams } as const;
    return [
      route({ ...common, method: 'get', path, summary: says.list, query: listQuery }, ({ query, ctx }, req) => listed(ctx, query, req)),
      route({ ...search, path: `${path}/.search`, summary: says.search }, ({ body, ctx }, req) => listed(ctx, body, req)),
      route({ ...common, method: 'post', path, summary: says.create, body: anyBody }, async ({ body, ctx }, req) =>
        scim(201, await service.create(ctx, connectionOf(req), body), { etag: true, location: true }),
      ),
      route({ ...one, method: 'get', summary: says.get, query: projectionQuery }, async ({ params, query, ctx }, req) => {
        const resource = await service.get(ctx, connectionOf(req), params.id);
        return scim(200, projected(resource, query, coreUrn), { etag: resource });
      }),
      route({ ...one, method: 'put', summary: says.replace, body: anyBody }, async ({ params, body, ctx }, req) =>
        scim(200, await service.replace(ctx, connectionOf(req), params.id, body, req.get('if-match')), { etag: true }),
      ),
      route({ ...one, method: 'patch', summary: says.patch, body: anyBody }, async ({ params, body, ctx }, req) =>
        scim(200, await service.patch(ctx, connectionOf(req), params.id, body, req.get('if-match')), { etag: true }),
      ),
      route(
        { ...one, method: 'delete', summary: says.remove, response: { status: 204, description: 'Deleted', kind: 'empty' } },
        async ({ params, ctx }, req) => {
          await service.remove(ctx, connectionOf(req), params.id, req.get('if-match'));
        },
      ),
    ];
  };

  return declareRouter(
    deps,
    [
      route({ ...common, method: 'get', path: '/ServiceProviderConfig', summary: 'SCIM service provider configuration' }, () =>
        scim(200, serviceProviderConfig(base())),
      ),
      route({ ...common, method: 'get', path: '/ResourceTypes', summary: 'SCIM resource types' }, () =>
        scim(200, list(resourceTypes(base()))),
      ),
      route({ ...common, method: 'get', path: '/ResourceTypes/:id', summary: 'A SCIM resource type', params: idParams }, ({ params }) =>
        scim(200, byId(resourceTypes(base()), params.id, 'Resource type')),
      ),
      route({ ...common, method: 'get', path: '/Schemas', summary: 'SCIM schemas' }, () => scim(200, list(schemas(base())))),
      route({ ...common, method: 'get', path: '/Schemas/:id', summary: 'A SCIM schema', params: idParams }, ({ params }) =>
        scim(200, byId(schemas(base()), params.id, 'Schema')),
      ),

      ...resourceRoutes('/Users', SCHEMA.user, listUsers, {
        service: {
          create: users.createUser,
          get: users.getUser,
          replace: users.replaceUser,
          patch: users.patchUser,
          remove: users.deleteUser,
        },
        says: {
          list: 'List or filter SCIM users',
          search: 'Search SCIM users (RFC 7644 §3.4.3)',
          create: 'Create a SCIM user (an account)',
          get: 'A SCIM user',
          replace: 'Replace a SCIM user',
          patch: 'Patch a SCIM user',
          remove: 'Delete a SCIM user (the account)',
        },
      }),
      ...resourceRoutes('/Groups', SCHEMA.group, listGroups, {
        service: {
          create: groups.createGroup,
          get: groups.getGroup,
          replace: groups.replaceGroup,
          patch: groups.patchGroup,
          remove: groups.deleteGroup,
        },
        says: {
          list: 'List or filter SCIM groups',
          search: 'Search SCIM groups (RFC 7644 §3.4.3)',
          create: 'Create a SCIM group',
          get: 'A SCIM group',
          replace: 'Replace a SCIM group',
          patch: 'Patch a SCIM group (members, name)',
          remove: 'Delete a SCIM group',
        },
      }),
    ],
    { tags: ['SCIM'] },
  );
}
