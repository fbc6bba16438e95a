import { z } from 'zod';
import type { Config } from '../../config';
import { clientIdParams, createClientBody, updateClientBody } from '../admin/admin.schemas';
import {
  changePasswordBody,
  emailBody,
  linkTokenBody,
  loginRequestBody,
  loginResolveBody,
  setPasswordBody,
} from '../auth/account.schemas';
import { loginBody, refreshBody, registerBody, updateMeBody } from '../auth/auth.schemas';
import { consentRequestBody, revokeParams, tokenParams } from '../oauth/oauth.schemas';
import { assignRoleBody, checkPermissionBody, createRoleBody, updateRoleBody } from '../rbac/rbac.schemas';
import { inviteUserBody, updateUserBody } from '../users/users.schemas';

type Json = Record<string, unknown>;

/** JSON Schema of what a client sends (zod input side; refinements are described in prose, not in the schema). */
function input(schema: z.ZodType): Json {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  delete json.$schema;
  return json;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonContent = (schema: Json) => ({ 'application/json': { schema } });

const ERROR = { description: 'Error', content: jsonContent(ref('Error')) };
const OAUTH_ERROR = { description: 'OAuth error (RFC 6749 §5.2)', content: jsonContent(ref('OAuthError')) };

interface Operation {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  tag: string;
  summary: string;
  /** Permission or role the endpoint requires, shown in the description. */
  guard?: string;
  auth?: 'bearer' | 'cookie-or-bearer' | 'client' | 'none';
  body?: z.ZodType;
  /** The body may be omitted (e.g. the refresh token comes from the cookie). */
  bodyOptional?: boolean;
  form?: boolean;
  ok?: { status: number; description: string; schema?: Json };
  errors?: number[];
  oauthErrors?: boolean;
}

const userId = { name: 'userId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const roleId = { name: 'roleId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };

const OPERATIONS: Operation[] = [
  { method: 'get', path: '/health', tag: 'Health', summary: 'Liveness with a database probe', auth: 'none', ok: { status: 200, description: '{ status: "OK" }', schema: { type: 'object', properties: { status: { const: 'OK' } } } }, errors: [503] },

  { method: 'post', path: '/api/auth/register', tag: 'Auth', summary: 'Register; returns tokens and sets the SSO cookies', auth: 'none', body: registerBody, ok: { status: 201, description: 'Signed in', schema: ref('AuthResult') }, errors: [400, 403, 409] },
  { method: 'post', path: '/api/auth/login', tag: 'Auth', summary: 'Sign in with email and password', auth: 'none', body: loginBody, ok: { status: 200, description: 'Signed in', schema: ref('AuthResult') }, errors: [400, 401, 403, 429] },
  { method: 'get', path: '/api/auth/me', tag: 'Auth', summary: 'The caller with live roles and permissions', ok: { status: 200, description: '{ user }', schema: { type: 'object', properties: { user: ref('User') } } }, errors: [401] },
  { method: 'put', path: '/api/auth/me', tag: 'Auth', summary: 'Update own name', body: updateMeBody, ok: { status: 200, description: '{ user }', schema: { type: 'object', properties: { user: ref('User') } } }, errors: [400, 401, 403] },
  { method: 'post', path: '/api/auth/refresh-token', tag: 'Auth', summary: 'Rotate the refresh token (refreshToken cookie, else body { refreshToken })', auth: 'none', body: refreshBody, bodyOptional: true, ok: { status: 200, description: '{ accessToken, refreshToken } and new cookies' }, errors: [401, 403, 503] },
  { method: 'post', path: '/api/auth/logout', tag: 'Auth', summary: 'Revoke the session and clear the cookies', ok: { status: 200, description: '{ success: true }' }, errors: [401] },
  { method: 'get', path: '/api/auth/verify-admin', tag: 'Auth', summary: 'Identity if the caller holds admin, super_admin or manager', guard: 'role admin, super_admin or manager', ok: { status: 200, description: '{ user }' }, errors: [401, 403] },
  { method: 'post', path: '/api/auth/change-password', tag: 'Account', summary: 'Change own password; revokes every other session', body: changePasswordBody, ok: { status: 200, description: '{ success: true }' }, errors: [400, 401, 403] },
  { method: 'get', path: '/api/auth/sessions', tag: 'Account', summary: 'Own active sessions', ok: { status: 200, description: '{ sessions: [{ id, created_at, last_used_at, expires_at, ip, user_agent, client_id, current }] }' }, errors: [401, 403] },
  { method: 'post', path: '/api/auth/sessions/revoke-others', tag: 'Account', summary: 'Sign out every other session', ok: { status: 200, description: '{ revoked: n }' }, errors: [401, 403] },
  { method: 'delete', path: '/api/auth/sessions/{sessionId}', tag: 'Account', summary: 'Revoke one own session', ok: { status: 204, description: 'Revoked' }, errors: [401, 403, 404] },
  { method: 'get', path: '/api/auth/apps', tag: 'Account', summary: 'Apps approved to sign in with this account', ok: { status: 200, description: '{ apps: [{ client_id, name, scopes, granted_at, last_used_at }] }' }, errors: [401, 403] },
  { method: 'delete', path: '/api/auth/apps/{clientId}', tag: 'Account', summary: "Drop an app's grant and revoke its sessions", ok: { status: 204, description: 'Dropped' }, errors: [401, 403, 404] },
  { method: 'post', path: '/api/auth/verify-email', tag: 'Account', summary: 'Validate an email link without consuming it', auth: 'none', body: linkTokenBody, ok: { status: 200, description: '{ valid: true, email, purpose }' }, errors: [400] },
  { method: 'post', path: '/api/auth/verify-email/confirm', tag: 'Account', summary: 'Mark the address verified and burn the verification link (beyond the spec)', auth: 'none', body: linkTokenBody, ok: { status: 200, description: '{ success: true, email, email_verified: true }' }, errors: [400] },
  { method: 'post', path: '/api/auth/set-password', tag: 'Account', summary: 'Set the password from an email link; marks the address verified', auth: 'none', body: setPasswordBody, ok: { status: 200, description: '{ success: true }' }, errors: [400] },
  { method: 'post', path: '/api/auth/verify-email/resend', tag: 'Account', summary: 'Resend the verification email (same answer for unknown addresses)', auth: 'none', body: emailBody, ok: { status: 202, description: '{ success: true }' }, errors: [400] },
  { method: 'post', path: '/api/auth/forgot-password', tag: 'Account', summary: 'Email a set-password link (beyond the spec; same answer for unknown addresses)', auth: 'none', body: emailBody, ok: { status: 202, description: '{ success: true }' }, errors: [400] },
  { method: 'get', path: '/api/auth/login-target', tag: 'Account', summary: 'Resolve an allow-listed post-login destination (query app=, redirect_to= or path=)', auth: 'none', ok: { status: 200, description: '{ url }' }, errors: [400] },
  { method: 'post', path: '/api/auth/login-request', tag: 'Account', summary: 'Mint a single-use login token bound to a destination', auth: 'none', body: loginRequestBody, ok: { status: 200, description: '{ login_token, expires_in: 300 }' }, errors: [400] },
  { method: 'post', path: '/api/auth/login-resolve', tag: 'Account', summary: 'Redeem a login token', auth: 'none', body: loginResolveBody, ok: { status: 200, description: '{ url }' }, errors: [400] },
  { method: 'get', path: '/api/auth/authorize', tag: 'OAuth 2.0', summary: 'Legacy: 302 to /api/oauth/authorize with the same query', auth: 'none', ok: { status: 302, description: 'Redirect' } },

  { method: 'get', path: '/api/oauth/authorize', tag: 'OAuth 2.0', summary: 'Authorization endpoint (code + PKCE S256); browser redirect', auth: 'none', ok: { status: 302, description: 'To the login page, the consent page, or redirect_uri with code and state' }, errors: [400] },
  { method: 'get', path: '/api/oauth/consent-info', tag: 'OAuth 2.0', summary: 'Client and scopes of a pending authorization (query request_id)', ok: { status: 200, description: '{ request_id, client: { client_id, name }, scopes, redirect_uri }' }, errors: [400, 401, 403, 404] },
  { method: 'post', path: '/api/oauth/authorize/approve', tag: 'OAuth 2.0', summary: 'Approve; returns the redirect carrying the one-time code', body: consentRequestBody, ok: { status: 200, description: '{ redirect_url }' }, errors: [400, 401, 403, 404] },
  { method: 'post', path: '/api/oauth/authorize/deny', tag: 'OAuth 2.0', summary: 'Deny; returns the redirect carrying error=access_denied', body: consentRequestBody, ok: { status: 200, description: '{ redirect_url }' }, errors: [400, 401, 403, 404] },
  { method: 'post', path: '/api/oauth/token', tag: 'OAuth 2.0', summary: 'Token endpoint: authorization_code and refresh_token grants', auth: 'client', body: tokenParams, form: true, ok: { status: 200, description: 'Tokens', schema: ref('TokenResponse') }, oauthErrors: true },
  { method: 'get', path: '/api/oauth/userinfo', tag: 'OAuth 2.0', summary: 'OpenID profile of the token holder, by scope', auth: 'bearer', ok: { status: 200, description: '{ sub } plus name, updated_at (profile) and email, email_verified (email); all for first-party tokens' }, oauthErrors: true },
  { method: 'post', path: '/api/oauth/userinfo', tag: 'OAuth 2.0', summary: 'Same as GET (Bearer header only)', auth: 'bearer', ok: { status: 200, description: 'As GET' }, oauthErrors: true },
  { method: 'post', path: '/api/oauth/revoke', tag: 'OAuth 2.0', summary: 'Token revocation (RFC 7009)', auth: 'client', body: revokeParams, form: true, ok: { status: 200, description: 'Revoked, or unknown / already revoked (empty body)' }, oauthErrors: true },
  { method: 'get', path: '/api/oauth/.well-known/oauth-authorization-server', tag: 'OAuth 2.0', summary: 'Discovery document (also at /.well-known/oauth-authorization-server)', auth: 'none', ok: { status: 200, description: 'RFC 8414 metadata' } },

  { method: 'get', path: '/api/users', tag: 'Users', summary: 'List users (query search, page, limit <= 100)', guard: 'users:read', ok: { status: 200, description: '{ users, total, page, limit }' }, errors: [400] },
  { method: 'post', path: '/api/users', tag: 'Users', summary: 'Invite a user (beyond the spec): emails a set-password link', guard: 'users:write', body: inviteUserBody, ok: { status: 201, description: '{ user }', schema: { type: 'object', properties: { user: ref('UserDetail') } } }, errors: [400, 404, 409] },
  { method: 'get', path: '/api/users/{userId}', tag: 'Users', summary: 'User detail with roles and permissions', guard: 'users:read', ok: { status: 200, description: '{ user }', schema: { type: 'object', properties: { user: ref('UserDetail') } } }, errors: [400, 404] },
  { method: 'put', path: '/api/users/{userId}', tag: 'Users', summary: 'Update a user', guard: 'users:write', body: updateUserBody, ok: { status: 200, description: '{ user }' }, errors: [400, 404, 409] },
  { method: 'delete', path: '/api/users/{userId}', tag: 'Users', summary: 'Deactivate a user and revoke their sessions', guard: 'users:delete', ok: { status: 200, description: '{ user } (is_active false)' }, errors: [400, 404, 409] },
  { method: 'get', path: '/api/users/{userId}/roles', tag: 'Users', summary: "A user's roles", guard: 'users:read', ok: { status: 200, description: '{ roles } (Role objects)' }, errors: [400, 404] },
  { method: 'post', path: '/api/users/{userId}/roles', tag: 'Users', summary: 'Assign a role ({ role_id } or { role, application? })', guard: 'users:manage_roles', body: assignRoleBody, ok: { status: 201, description: '{ roles } (200 when already held)' }, errors: [400, 404, 409] },
  { method: 'delete', path: '/api/users/{userId}/roles/{roleId}', tag: 'Users', summary: 'Remove a role', guard: 'users:manage_roles', ok: { status: 204, description: 'Removed' }, errors: [400, 404, 409] },
  { method: 'get', path: '/api/users/admin/list', tag: 'Users', summary: 'Users holding admin-tier roles', guard: 'system:manage_users', ok: { status: 200, description: '{ users } (each with adminRole)' } },
  { method: 'get', path: '/api/users/roles/list', tag: 'Users', summary: 'Active roles', guard: 'system:manage_roles', ok: { status: 200, description: '{ roles }' } },
  { method: 'post', path: '/api/users/roles', tag: 'Users', summary: 'Create a role', guard: 'role super_admin', body: createRoleBody, ok: { status: 201, description: '{ role }', schema: { type: 'object', properties: { role: ref('Role') } } }, errors: [400, 409] },
  { method: 'put', path: '/api/users/roles/{roleId}', tag: 'Users', summary: 'Update a role', guard: 'role super_admin', body: updateRoleBody, ok: { status: 200, description: '{ role }' }, errors: [400, 404, 409] },
  { method: 'delete', path: '/api/users/roles/{roleId}', tag: 'Users', summary: 'Deactivate a role', guard: 'role super_admin', ok: { status: 200, description: '{ role } (is_active false)' }, errors: [400, 404, 409] },

  { method: 'get', path: '/api/rbac/permissions', tag: 'RBAC', summary: 'Permission catalogue', guard: 'role admin or super_admin', ok: { status: 200, description: '{ permissions: [{ name, description }] }' } },
  { method: 'get', path: '/api/rbac/roles', tag: 'RBAC', summary: 'Roles, including application-scoped ones', guard: 'role admin or super_admin', ok: { status: 200, description: '{ roles }' } },
  { method: 'post', path: '/api/rbac/roles', tag: 'RBAC', summary: 'Create a role', guard: 'role super_admin', body: createRoleBody, ok: { status: 201, description: '{ role }' }, errors: [400, 409] },
  { method: 'put', path: '/api/rbac/roles/{roleId}', tag: 'RBAC', summary: 'Update a role', guard: 'role super_admin', body: updateRoleBody, ok: { status: 200, description: '{ role }' }, errors: [400, 404, 409] },
  { method: 'delete', path: '/api/rbac/roles/{roleId}', tag: 'RBAC', summary: 'Deactivate a role', guard: 'role super_admin', ok: { status: 200, description: '{ role } (is_active false)' }, errors: [400, 404, 409] },
  { method: 'get', path: '/api/rbac/users/{userId}/roles', tag: 'RBAC', summary: "A user's roles", guard: 'users:read', ok: { status: 200, description: '{ roles } (Role objects)' }, errors: [400, 404] },
  { method: 'post', path: '/api/rbac/users/{userId}/roles', tag: 'RBAC', summary: 'Assign a role', guard: 'users:manage_roles', body: assignRoleBody, ok: { status: 201, description: '{ roles } (200 when already held)' }, errors: [400, 404, 409] },
  { method: 'delete', path: '/api/rbac/users/{userId}/roles/{roleId}', tag: 'RBAC', summary: 'Remove a role', guard: 'users:manage_roles', ok: { status: 204, description: 'Removed' }, errors: [400, 404, 409] },
  { method: 'get', path: '/api/rbac/users/{userId}/permissions', tag: 'RBAC', summary: 'Resolved roles and permissions', guard: 'users:read', ok: { status: 200, description: '{ user_id, roles: [{ id, name, application }], permissions }' }, errors: [400, 404] },
  { method: 'post', path: '/api/rbac/users/{userId}/check-permission', tag: 'RBAC', summary: 'Does the user hold a permission?', guard: 'users:read', body: checkPermissionBody, ok: { status: 200, description: '{ hasPermission }', schema: { type: 'object', properties: { hasPermission: { type: 'boolean' } } } }, errors: [400, 404] },
  { method: 'get', path: '/api/rbac/admin-users', tag: 'RBAC', summary: 'Admin users', guard: 'system:manage_users', ok: { status: 200, description: '{ users } (each with adminRole)' } },

  { method: 'get', path: '/api/admin/summary', tag: 'Admin', summary: 'Counts of users, clients, roles, admins', guard: 'role admin or super_admin', ok: { status: 200, description: '{ users, active_users, clients, active_clients, roles, admins }' } },
  { method: 'get', path: '/api/admin/oauth-clients', tag: 'Admin', summary: 'List OAuth clients', guard: 'oauth_clients:read', ok: { status: 200, description: '{ clients }' } },
  { method: 'get', path: '/api/admin/oauth-clients/{clientId}', tag: 'Admin', summary: 'Client detail (secret redacted)', guard: 'oauth_clients:read', ok: { status: 200, description: '{ client }', schema: { type: 'object', properties: { client: ref('OAuthClient') } } }, errors: [404] },
  { method: 'post', path: '/api/admin/oauth-clients', tag: 'Admin', summary: 'Create a client; the secret is returned once', guard: 'oauth_clients:write', body: createClientBody, ok: { status: 201, description: '{ client, client_secret } (Cache-Control: no-store)' }, errors: [400] },
  { method: 'put', path: '/api/admin/oauth-clients/{clientId}', tag: 'Admin', summary: 'Update a client', guard: 'oauth_clients:write', body: updateClientBody, ok: { status: 200, description: '{ client }' }, errors: [400, 404] },
  { method: 'post', path: '/api/admin/oauth-clients/{clientId}/rotate-secret', tag: 'Admin', summary: 'Rotate the secret (the old one stops working at once)', guard: 'oauth_clients:rotate_secret', ok: { status: 200, description: '{ client_id, client_secret } (Cache-Control: no-store)' }, errors: [404] },
  { method: 'delete', path: '/api/admin/oauth-clients/{clientId}', tag: 'Admin', summary: 'Deactivate a client and revoke its sessions', guard: 'oauth_clients:delete', ok: { status: 200, description: '{ client } (is_active false)' }, errors: [404] },
];

const TIMESTAMPS = {
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
};

const COMPONENT_SCHEMAS: Json = {
  Error: {
    type: 'object',
    required: ['error', 'message'],
    properties: {
      error: { type: 'string', description: 'Stable machine code (CONTRACT §2)' },
      message: { type: 'string' },
      details: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } },
    },
  },
  OAuthError: {
    type: 'object',
    required: ['error', 'error_description'],
    properties: { error: { type: 'string' }, error_description: { type: 'string' } },
  },
  User: {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid' },
      email: { type: 'string' },
      name: { type: 'string' },
      first_name: { type: 'string' },
      last_name: { type: 'string' },
      roles: { type: 'array', items: { type: 'string' } },
      permissions: { type: 'array', items: { type: 'string' } },
      adminRole: { type: 'string', enum: ['super_admin', 'admin', 'manager', 'user'] },
      is_active: { type: 'boolean' },
      email_verified: { type: 'boolean' },
    },
  },
  AuthResult: {
    type: 'object',
    properties: { user: ref('User'), accessToken: { type: 'string' }, refreshToken: { type: 'string' } },
  },
  UserDetail: {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid' },
      email: { type: 'string' },
      name: { type: 'string' },
      first_name: { type: 'string' },
      last_name: { type: 'string' },
      is_active: { type: 'boolean' },
      email_verified: { type: 'boolean' },
      roles: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, application: { type: ['string', 'null'] } } } },
      permissions: { type: 'array', items: { type: 'string' } },
      ...TIMESTAMPS,
      last_login_at: { type: ['string', 'null'], format: 'date-time' },
    },
  },
  Role: {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid' },
      name: { type: 'string' },
      description: { type: 'string' },
      application: { type: ['string', 'null'] },
      permissions: { type: 'array', items: { type: 'string' } },
      is_active: { type: 'boolean' },
      ...TIMESTAMPS,
    },
  },
  OAuthClient: {
    type: 'object',
    properties: {
      client_id: { type: 'string' },
      name: { type: 'string' },
      redirect_uris: { type: 'array', items: { type: 'string', format: 'uri' } },
      scopes: { type: 'array', items: { type: 'string' } },
      is_active: { type: 'boolean' },
      ...TIMESTAMPS,
    },
  },
  TokenResponse: {
    type: 'object',
    properties: {
      access_token: { type: 'string' },
      token_type: { const: 'Bearer' },
      expires_in: { const: 3600 },
      refresh_token: { type: 'string' },
      scope: { type: 'string' },
    },
  },
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid input (validation_error)',
  401: 'Not authenticated',
  403: 'Forbidden: lacks the required role or permission, a token issued to an OAuth client, or a cross-site request',
  404: 'Not found',
  409: 'Conflict',
  429: 'Rate limited or too many attempts',
  503: 'Database unavailable',
};

function pathParams(path: string): Json[] {
  const params: Json[] = [];
  for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
    if (name === 'userId') params.push(userId);
    else if (name === 'roleId') params.push(roleId);
    else params.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  return params;
}

function security(op: Operation): Json[] {
  switch (op.auth) {
    case 'none':
      return [];
    case 'client':
      return [{ clientBasic: [] }, {}];
    case 'bearer':
      return [{ bearer: [] }];
    default:
      return op.path.startsWith('/api/auth') || op.path.startsWith('/api/oauth/consent') || op.path.startsWith('/api/oauth/authorize/')
        ? [{ bearer: [] }, { cookie: [] }]
        : [{ bearer: [] }];
  }
}

/** The OpenAPI 3.1 description served at GET /api/openapi.json (CONTRACT §7). Built once per app. */
export function buildOpenApiDocument(config: Pick<Config, 'baseUrl'>): Json {
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) {
    const responses: Json = {};
    if (op.ok) {
      responses[String(op.ok.status)] = op.ok.schema
        ? { description: op.ok.description, content: jsonContent(op.ok.schema) }
        : { description: op.ok.description };
    }
    const protectedOp = op.auth === undefined || op.auth === 'cookie-or-bearer' || op.auth === 'bearer';
    const errors = new Set(op.errors ?? []);
    if (protectedOp) errors.add(401);
    if (op.guard) errors.add(403);
    if (op.path.startsWith('/api/')) errors.add(429);
    for (const status of [...errors].sort()) {
      responses[String(status)] = op.oauthErrors ? OAUTH_ERROR : { ...ERROR, description: STATUS_TEXT[status] ?? 'Error' };
    }
    if (op.oauthErrors) responses.default = OAUTH_ERROR;

    const operation: Json = {
      tags: [op.tag],
      summary: op.summary,
      operationId: `${op.method}${op.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      security: security(op),
      responses,
    };
    if (op.guard) operation.description = `Requires ${op.guard}.`;
    const params = pathParams(op.path);
    if (params.length) operation.parameters = params;
    if (op.body) {
      const schema = input(op.body);
      operation.requestBody = {
        required: !op.bodyOptional,
        content: op.form ? { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } } : jsonContent(schema),
      };
    }
    paths[op.path] = { ...(paths[op.path] ?? {}), [op.method]: operation };
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
    tags: ['Health', 'Auth', 'Account', 'OAuth 2.0', 'Users', 'RBAC', 'Admin'].map((name) => ({ name })),
    paths,
    components: {
      schemas: COMPONENT_SCHEMAS,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'accessToken' },
        clientBasic: { type: 'http', scheme: 'basic', description: 'client_id and client_secret (or both in the body)' },
      },
    },
  };
}
