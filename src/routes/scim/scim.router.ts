import type { Request } from 'express';
import { z } from 'zod';
import { SCIM_MEDIA_TYPE, ScimError, unauthorized } from '../../errors';
import { jsonDocument, type Document } from '../../http/outcome';
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

export function createScimRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const base = () => ctx.config.baseUrl;
  const common = { auth: 'scim', document: false, cors: false, noStore: true, invalid: invalidQuery } as const;
  const list = (items: Resource[]): Resource => ({
    schemas: [SCHEMA.list],
    totalResults: items.length,
    startIndex: 1,
    itemsPerPage: items.length,
    Resources: items,
  });
  const listUsers = async (query: ListQuery, req: Request): Promise<Document> => {
    const page = await users.listUsers(ctx, connectionOf(req), query);
    return scim(200, listResponse(page, query, SCHEMA.user));
  };
  const listGroups = async (query: ListQuery, req: Request): Promise<Document> => {
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

      // Users
      route({ ...common, method: 'get', path: '/Users', summary: 'List or filter SCIM users', query: listQuery }, ({ query }, req) =>
        listUsers(query, req),
      ),
      route({ ...search, path: '/Users/.search', summary: 'Search SCIM users (RFC 7644 §3.4.3)' }, ({ body }, req) => listUsers(body, req)),
      route(
        { ...common, method: 'post', path: '/Users', summary: 'Create a SCIM user (an account)', body: anyBody },
        async ({ body }, req) => scim(201, await users.createUser(ctx, connectionOf(req), body), { etag: true, location: true }),
      ),
      route(
        { ...common, method: 'get', path: '/Users/:id', summary: 'A SCIM user', params: idParams, query: projectionQuery },
        async ({ params, query }, req) => {
          const resource = await users.getUser(ctx, connectionOf(req), params.id);
          return scim(200, projected(resource, query, SCHEMA.user), { etag: resource });
        },
      ),
      route(
        { ...common, method: 'put', path: '/Users/:id', summary: 'Replace a SCIM user', params: idParams, body: anyBody },
        async ({ params, body }, req) =>
          scim(200, await users.replaceUser(ctx, connectionOf(req), params.id, body, req.get('if-match')), { etag: true }),
      ),
      route(
        { ...common, method: 'patch', path: '/Users/:id', summary: 'Patch a SCIM user', params: idParams, body: anyBody },
        async ({ params, body }, req) =>
          scim(200, await users.patchUser(ctx, connectionOf(req), params.id, body, req.get('if-match')), { etag: true }),
      ),
      route(
        {
          ...common,
          method: 'delete',
          path: '/Users/:id',
          summary: 'Delete a SCIM user (the account)',
          params: idParams,
          response: { status: 204, description: 'Deleted', kind: 'empty' },
        },
        async ({ params }, req) => {
          await users.deleteUser(ctx, connectionOf(req), params.id, req.get('if-match'));
        },
      ),

      // Groups
      route({ ...common, method: 'get', path: '/Groups', summary: 'List or filter SCIM groups', query: listQuery }, ({ query }, req) =>
        listGroups(query, req),
      ),
      route({ ...search, path: '/Groups/.search', summary: 'Search SCIM groups (RFC 7644 §3.4.3)' }, ({ body }, req) =>
        listGroups(body, req),
      ),
      route({ ...common, method: 'post', path: '/Groups', summary: 'Create a SCIM group', body: anyBody }, async ({ body }, req) =>
        scim(201, await groups.createGroup(ctx, connectionOf(req), body), { etag: true, location: true }),
      ),
      route(
        { ...common, method: 'get', path: '/Groups/:id', summary: 'A SCIM group', params: idParams, query: projectionQuery },
        async ({ params, query }, req) => {
          const resource = await groups.getGroup(ctx, connectionOf(req), params.id);
          return scim(200, projected(resource, query, SCHEMA.group), { etag: resource });
        },
      ),
      route(
        { ...common, method: 'put', path: '/Groups/:id', summary: 'Replace a SCIM group', params: idParams, body: anyBody },
        async ({ params, body }, req) =>
          scim(200, await groups.replaceGroup(ctx, connectionOf(req), params.id, body, req.get('if-match')), { etag: true }),
      ),
      route(
        { ...common, method: 'patch', path: '/Groups/:id', summary: 'Patch a SCIM group (members, name)', params: idParams, body: anyBody },
        async ({ params, body }, req) =>
          scim(200, await groups.patchGroup(ctx, connectionOf(req), params.id, body, req.get('if-match')), { etag: true }),
      ),
      route(
        {
          ...common,
          method: 'delete',
          path: '/Groups/:id',
          summary: 'Delete a SCIM group',
          params: idParams,
          response: { status: 204, description: 'Deleted', kind: 'empty' },
        },
        async ({ params }, req) => {
          await groups.deleteGroup(ctx, connectionOf(req), params.id, req.get('if-match'));
        },
      ),
    ],
    { tags: ['SCIM'] },
  );
}
