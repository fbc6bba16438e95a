import type { Application } from 'express';
import { z } from 'zod';
import type { Config } from '../../config';
import { errorBody, oauthErrorBody } from '../../wire/common.schemas';
import type { RouteDecl } from '../route';
import { guardOf, listDeclaredRoutes, type DeclaredAppRoute } from '../route-table';

type Json = Record<string, unknown>;
type JsonSchema = z.core.JSONSchema.JSONSchema;

const COMPONENTS = '#/components/schemas/';

/**
 * JSON Schema of a zod schema (z.toJSONSchema, draft 2020-12). Schemas named with `.meta({ id })` become shared
 * components: they are collected into `components` and referenced, every other part is inlined. Refinements are
 * described in prose (summary, description), not in the schema.
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output', components: Json): JsonSchema {
  const { $schema: _dialect, $defs: defs = {}, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
  const relink = (value: JsonSchema): JsonSchema => JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', `"${COMPONENTS}`));
  for (const [name, def] of Object.entries(defs)) components[name] ??= relink(def);
  // A schema that is itself a component comes back as a bare reference to it.
  const id = z.globalRegistry.get(schema)?.id;
  if (typeof id === 'string') {
    components[id] ??= relink(json);
    return { $ref: `${COMPONENTS}${id}` };
  }
  return relink(json);
}

const jsonContent = (schema: JsonSchema) => ({ 'application/json': { schema } });

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid input (validation_error)',
  401: 'Not authenticated',
  403: 'Forbidden: lacks the required role or permission, a token issued to an OAuth client, a cross-site request, or mfa_required (MFA_REQUIRED_FOR_ADMINS)',
  404: 'Not found',
  409: 'Conflict',
  429: 'Rate limited or too many attempts',
  503: 'Database unavailable',
};

/** The statuses a declaration implies, plus the ones it lists. */
export function errorStatuses(path: string, decl: RouteDecl): number[] {
  const statuses = new Set(decl.errors ?? []);
  if (decl.params || decl.query || decl.body) statuses.add(400);
  if (decl.params) statuses.add(404);
  if (decl.auth === 'user' || decl.auth === 'user-or-client' || decl.auth === 'token') statuses.add(401);
  // `user` refuses tokens issued to OAuth clients; a guard refuses too few rights; originCheck cross-site posts.
  if (decl.auth === 'user' || guardOf(decl) || decl.originCheck) statuses.add(403);
  if (path.startsWith('/api/') || decl.rateLimit) statuses.add(429);
  return [...statuses].sort();
}

function security(decl: RouteDecl): Json[] {
  switch (decl.auth) {
    case 'user':
    case 'user-or-client':
      return [{ bearer: [] }, { cookie: [] }];
    case 'browser':
      return [{ cookie: [] }, {}];
    case 'client':
      return [{ clientBasic: [] }, {}];
    case 'token':
      return [{ bearer: [] }];
    default:
      return [];
  }
}

function guardText(decl: RouteDecl): string | undefined {
  const guard = guardOf(decl);
  if (!guard) return undefined;
  if ('permission' in guard) return `Requires permission ${guard.permission}.`;
  if ('admin' in guard) return 'Requires role admin or super_admin.';
  return `Requires role ${guard.roles.join(' or ')}.`;
}

/** Path and query parameters from the declared schemas (query: one parameter per property). */
function parameters(path: string, decl: RouteDecl, components: Json): Json[] {
  const out: Json[] = [];
  const fromObject = (schema: z.ZodType, where: 'path' | 'query') => {
    const json = jsonSchema(schema, 'input', components);
    const required = new Set(json.required ?? []);
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      const { description, ...rest } = typeof property === 'boolean' ? {} : property;
      out.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        schema: rest,
        ...(description ? { description } : {}),
      });
    }
  };
  if (decl.params) fromObject(decl.params, 'path');
  else for (const [, name] of path.matchAll(/\{(\w+)\}/g)) out.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  if (decl.query) fromObject(decl.query, 'query');
  return out;
}

function operation(route: DeclaredAppRoute, openApiPath: string, components: Json): Json {
  const { decl } = route;
  const oauth = decl.dialect === 'oauth';
  const errorResponse = (status: number) =>
    oauth
      ? { description: 'OAuth error (RFC 6749 §5.2)', content: jsonContent(jsonSchema(oauthErrorBody, 'output', components)) }
      : { description: STATUS_TEXT[status] ?? 'Error', content: jsonContent(jsonSchema(errorBody, 'output', components)) };

  const ok = decl.response ?? { description: 'OK' };
  const responses: Json = {
    [String(ok.status ?? 200)]: ok.schema
      ? { description: ok.description, content: jsonContent(jsonSchema(ok.schema, 'output', components)) }
      : { description: ok.description },
  };
  for (const status of errorStatuses(route.path, decl)) {
    const alternative = decl.errorBodies?.[status];
    responses[String(status)] = alternative
      ? {
          description: alternative.description,
          content: jsonContent({
            oneOf: [jsonSchema(errorBody, 'output', components), jsonSchema(alternative.schema, 'output', components)],
          }),
        }
      : errorResponse(status);
  }
  if (oauth) responses.default = errorResponse(0);

  const op: Json = {
    tags: decl.tags ?? [],
    summary: decl.summary,
    operationId: `${route.method}${openApiPath.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    security: security(decl),
    responses,
  };
  const mfaPolicy = decl.secondFactorForAdmins
    ? 'With MFA_REQUIRED_FOR_ADMINS=true, an admin-tier caller whose session has no second factor gets 403 mfa_required.'
    : undefined;
  const description = [guardText(decl), decl.description, mfaPolicy].filter(Boolean).join(' ');
  if (description) op.description = description;
  const params = parameters(openApiPath, decl, components);
  if (params.length) op.parameters = params;
  if (decl.body) {
    const schema = jsonSchema(decl.body, 'input', components);
    op.requestBody = {
      required: decl.bodyOptional !== true,
      content: decl.form ? { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } } : jsonContent(schema),
    };
  }
  return op;
}

/**
 * The OpenAPI 3.1 description served at GET /api/openapi.json (CONTRACT §7), generated from the route declarations
 * registered on `app` (src/routes/route.ts): nothing is listed by hand.
 */
export function buildOpenApiDocument(app: Application, config: Pick<Config, 'baseUrl'>): Json {
  const paths: Record<string, Json> = {};
  const components: Json = {};
  const tags: string[] = [];
  for (const route of listDeclaredRoutes(app)) {
    if (route.decl.document === false) continue;
    const openApiPath = route.path.replace(/:(\w+)/g, '{$1}');
    paths[openApiPath] = { ...(paths[openApiPath] ?? {}), [route.method]: operation(route, openApiPath, components) };
    for (const tag of route.decl.tags ?? []) if (!tags.includes(tag)) tags.push(tag);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'service-sso',
      version: '0.1.0',
      description:
        'Single sign-on server: accounts and sessions, OAuth 2.0 (code + PKCE S256), RBAC with live permission lookup, OAuth client administration.',
    },
    servers: [{ url: config.baseUrl }],
    tags: tags.map((name) => ({ name })),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'accessToken' },
        clientBasic: { type: 'http', scheme: 'basic', description: 'client_id and client_secret (or both in the body)' },
      },
    },
  };
}
