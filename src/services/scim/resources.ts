import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ScimGroupRow, ScimUserRecord } from '../../db/repositories/scim.repo';
import { ScimError } from '../../errors';
import { isSingleEmailAddress } from '../../lib/email-address';
import { nameProblem } from '../../lib/names';

/**
 * The SCIM resources (RFC 7643) as this server represents accounts and groups, what it reads from a directory's
 * bodies, ETags, and `attributes` / `excludedAttributes` (RFC 7644 §3.4.2.5). Pure: no database.
 */

export const SCHEMA = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  enterprise: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patch: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

export type Resource = Record<string, unknown>;

/** A JSON object (not an array, not null). */
function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `W/"…"`: a digest of the representation without its meta.version, so it changes exactly when the resource does. */
export function versionOf(resource: Resource): string {
  const { meta, ...rest } = resource;
  const metaRest = isJsonObject(meta) ? Object.fromEntries(Object.entries(meta).filter(([key]) => key !== 'version')) : {};
  const digest = createHash('sha256')
    .update(JSON.stringify({ ...rest, meta: metaRest }))
    .digest('base64url')
    .slice(0, 22);
  return `W/"${digest}"`;
}

function withVersion<R extends Resource & { meta: Record<string, string> }>(resource: R): Resource {
  return { ...resource, meta: { ...resource.meta, version: versionOf(resource) } };
}

/** A resource's `meta.version` and `meta.location` (the ETag and Location headers). */
export function metaOf(resource: Resource): { version?: string; location?: string } {
  const meta = resource.meta;
  if (!isJsonObject(meta)) return {};
  const { version, location } = meta;
  return { ...(typeof version === 'string' ? { version } : {}), ...(typeof location === 'string' ? { location } : {}) };
}

const iso = (d: Date) => d.toISOString();
const latest = (...dates: Array<Date | null>) => new Date(Math.max(...dates.filter((d): d is Date => d !== null).map((d) => d.getTime())));

/** An account as the connection sees it (CONTRACT §20: userName = email; the one address is the primary work email). */
export function userResource(r: ScimUserRecord, baseUrl: string): Resource {
  const { user } = r;
  const formatted = `${user.firstName} ${user.lastName}`.trim();
  const name: Record<string, string> = {};
  if (user.firstName) name.givenName = user.firstName;
  if (user.lastName) name.familyName = user.lastName;
  if (formatted) name.formatted = formatted;
  return withVersion({
    schemas: r.enterprise ? [SCHEMA.user, SCHEMA.enterprise] : [SCHEMA.user],
    id: user.id,
    ...(r.externalId !== null ? { externalId: r.externalId } : {}),
    userName: r.userName ?? user.email,
    ...(Object.keys(name).length ? { name } : {}),
    ...((r.displayName ?? formatted) ? { displayName: r.displayName ?? formatted } : {}),
    emails: [{ value: user.email, type: 'work', primary: true }],
    active: user.isActive,
    ...(r.groups.length
      ? {
          groups: r.groups.map((g) => ({ value: g.id, $ref: `${baseUrl}/scim/v2/Groups/${g.id}`, display: g.displayName, type: 'direct' })),
        }
      : {}),
    ...(r.enterprise ? { [SCHEMA.enterprise]: r.enterprise } : {}),
    meta: {
      resourceType: 'User',
      created: iso(user.createdAt),
      lastModified: iso(latest(user.updatedAt, r.scimUpdatedAt)),
      location: `${baseUrl}/scim/v2/Users/${user.id}`,
    },
  });
}

export function groupResource(g: ScimGroupRow, members: readonly string[], baseUrl: string): Resource {
  return withVersion({
    schemas: [SCHEMA.group],
    id: g.id,
    ...(g.externalId !== null ? { externalId: g.externalId } : {}),
    displayName: g.displayName,
    members: members.map((value) => ({ value, $ref: `${baseUrl}/scim/v2/Users/${value}`, type: 'User' })),
    meta: {
      resourceType: 'Group',
      created: iso(g.createdAt),
      lastModified: iso(g.updatedAt),
      location: `${baseUrl}/scim/v2/Groups/${g.id}`,
    },
  });
}

// ---------------------------------------------------------------------------------------------------------------
// attributes / excludedAttributes

/** Always returned whatever `attributes` / `excludedAttributes` say (RFC 7643 §7 `returned: always`). */
const ALWAYS = new Set(['id', 'schemas']);

/** Splits `a,b.c,urn:…:User:d` into lower-cased paths relative to the resource (the core URN prefix removed). */
export function attributeList(value: string | undefined, coreUrn: string): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((a) => a.trim().toLowerCase())
    .filter(Boolean)
    .map((a) => (a.startsWith(`${coreUrn.toLowerCase()}:`) ? a.slice(coreUrn.length + 1) : a));
}

/** The paths of an extension's attributes are `urn:…:User:attr`; the rest are `attr` or `attr.sub`. */
function splitPath(path: string, extensions: readonly string[]): [string, string | undefined] {
  const ext = extensions.find((e) => path === e.toLowerCase() || path.startsWith(`${e.toLowerCase()}:`));
  if (ext) return [ext.toLowerCase(), path.length > ext.length ? path.slice(ext.length + 1) : undefined];
  const dot = path.indexOf('.');
  return dot < 0 ? [path, undefined] : [path.slice(0, dot), path.slice(dot + 1)];
}

/** The resource with only the requested attributes, or without the excluded ones. */
export function project(resource: Resource, attributes: string[] | undefined, excluded: string[] | undefined): Resource {
  const extensions = [SCHEMA.enterprise];
  if (attributes?.length) {
    const wanted = new Map<string, Set<string> | 'all'>();
    for (const path of attributes) {
      const [head, sub] = splitPath(path, extensions);
      if (sub === undefined) wanted.set(head, 'all');
      else {
        const had = wanted.get(head);
        if (had !== 'all') wanted.set(head, new Set([...(had ?? []), sub]));
      }
    }
    const out: Resource = {};
    for (const [key, value] of Object.entries(resource)) {
      const lower = key.toLowerCase();
      const want = wanted.get(lower);
      if (ALWAYS.has(lower) || want === 'all') out[key] = value;
      else if (want) {
        const picked = pickSub(value, want);
        if (picked !== undefined) out[key] = picked;
      }
    }
    return out;
  }
  if (excluded?.length) {
    const out: Resource = { ...resource };
    for (const path of excluded) {
      const [head, sub] = splitPath(path, extensions);
      const key = Object.keys(out).find((k) => k.toLowerCase() === head);
      if (!key || ALWAYS.has(head)) continue;
      if (sub === undefined) delete out[key];
      else out[key] = dropSub(out[key], sub);
    }
    return out;
  }
  return resource;
}

function pickSub(value: unknown, subs: Set<string>): unknown {
  const pick = (o: unknown) =>
    o && typeof o === 'object' ? Object.fromEntries(Object.entries(o).filter(([k]) => subs.has(k.toLowerCase()))) : undefined;
  if (Array.isArray(value)) return value.map(pick);
  const picked = pick(value);
  return picked && Object.keys(picked).length ? picked : undefined;
}

function dropSub(value: unknown, sub: string): unknown {
  const drop = (o: unknown) =>
    o && typeof o === 'object' ? Object.fromEntries(Object.entries(o).filter(([k]) => k.toLowerCase() !== sub)) : o;
  return Array.isArray(value) ? value.map(drop) : drop(value);
}

// ---------------------------------------------------------------------------------------------------------------
// What a directory sends

/** Booleans as directories send them: Entra ID sends `"True"` / `"False"` strings in PATCH values. */
const booleanish = z.preprocess(
  (v) => (typeof v === 'string' && /^(true|false)$/i.test(v.trim()) ? v.trim().toLowerCase() === 'true' : v),
  z.boolean({ error: 'must be a boolean' }),
);

const text = (max: number) => z.string().max(max);

const userInput = z.looseObject({
  userName: z.string({ error: 'userName is required' }).trim().min(1, 'userName is required').max(320),
  externalId: text(500).nullish(),
  displayName: text(500).nullish(),
  name: z.looseObject({ givenName: text(200).nullish(), familyName: text(200).nullish(), formatted: text(500).nullish() }).nullish(),
  emails: z
    .array(z.looseObject({ value: text(320).nullish(), type: text(100).nullish(), primary: booleanish.nullish() }))
    .max(20)
    .nullish(),
  active: booleanish.nullish(),
  [SCHEMA.enterprise]: z.record(z.string(), z.unknown()).nullish(),
});

/** What an account and the connection's record of it become from a User resource (create, replace, patched). */
export interface UserInput {
  email: string;
  /** The directory's userName when it is not an email address (kept per connection, answered as userName). */
  userName: string | null;
  firstName: string;
  lastName: string;
  displayName: string | null;
  externalId: string | null;
  active: boolean;
  enterprise: Record<string, unknown> | null;
}

function invalidValue(error: z.ZodError): ScimError {
  const issue = error.issues[0];
  const path = issue.path.join('.');
  return new ScimError('validation_error', `${path ? `${path}: ` : ''}${issue.message}`, 'invalidValue');
}

/**
 * Reads a User resource. `userName` is the account's email; when it is not an email address, the primary (else the
 * first) `emails` value is (CONTRACT §20). Names are trimmed; `active` defaults to true.
 */
export function readUser(body: unknown): UserInput {
  const parsed = userInput.safeParse(body);
  if (!parsed.success) throw invalidValue(parsed.error);
  const u = parsed.data;
  const emails = (u.emails ?? []).filter((e) => typeof e.value === 'string' && e.value.trim());
  const primary = emails.find((e) => e.primary === true) ?? emails[0];
  const userNameIsEmail = isSingleEmailAddress(u.userName);
  const candidate = userNameIsEmail ? u.userName : primary?.value?.trim();
  if (!candidate || !isSingleEmailAddress(candidate)) {
    throw new ScimError('validation_error', 'userName (or the primary emails value) must be an email address', 'invalidValue');
  }
  const enterprise = u[SCHEMA.enterprise];
  const ext = isJsonObject(enterprise) ? enterprise : null;
  if (ext && JSON.stringify(ext).length > 10_000)
    throw new ScimError('validation_error', 'The enterprise extension is too large', 'invalidValue');
  const firstName = (u.name?.givenName ?? '').trim();
  const lastName = (u.name?.familyName ?? '').trim();
  const displayName = u.displayName?.trim() || null;
  for (const [field, value] of [
    ['name.givenName', firstName],
    ['name.familyName', lastName],
    ['displayName', displayName ?? ''],
  ] as const) {
    // The account's names follow the API's rule (CONTRACT §8): one line, at most 100 characters; empty is allowed here.
    const problem = value ? nameProblem(value) : undefined;
    if (problem) throw new ScimError('validation_error', `${field} ${problem}`, 'invalidValue');
  }
  return {
    email: candidate.trim().toLowerCase(),
    userName: userNameIsEmail ? null : u.userName,
    firstName,
    lastName,
    displayName,
    externalId: u.externalId ?? null,
    active: u.active ?? true,
    enterprise: ext && Object.keys(ext).length ? ext : null,
  };
}

const groupInput = z.looseObject({
  displayName: z.string({ error: 'displayName is required' }).trim().min(1, 'displayName is required').max(500),
  externalId: text(500).nullish(),
  members: z
    .array(z.looseObject({ value: z.string({ error: 'members.value is required' }).max(100) }))
    .max(100_000)
    .nullish(),
});

export interface GroupInput {
  displayName: string;
  externalId: string | null;
  members: string[];
}

export function readGroup(body: unknown): GroupInput {
  const parsed = groupInput.safeParse(body);
  if (!parsed.success) throw invalidValue(parsed.error);
  const g = parsed.data;
  return { displayName: g.displayName, externalId: g.externalId ?? null, members: [...new Set((g.members ?? []).map((m) => m.value))] };
}

/** The body of a PATCH (RFC 7644 §3.5.2), `op` in any case (Entra ID sends `Replace`, `Add`, `Remove`). */
const patchBody = z.looseObject({
  schemas: z.array(z.string()).refine((s) => s.includes(SCHEMA.patch), `schemas must include ${SCHEMA.patch}`),
  Operations: z
    .array(
      z.looseObject({
        op: z.string().refine((op) => patchOp(op) !== undefined, 'op must be add, replace or remove'),
        path: z.string().max(1000).optional(),
        value: z.unknown().optional(),
      }),
    )
    .min(1, 'Operations must not be empty')
    .max(1000),
});

/** One operation of a PATCH: `remove` always names its target (scim-patch's `ScimPatchOperation` says the same). */
export type PatchOperation = { op: 'remove'; path: string; value?: unknown } | { op: 'add' | 'replace'; path?: string; value?: unknown };

/** `add`, `replace` or `remove` in any case, lower-cased; undefined for anything else. */
function patchOp(raw: string): PatchOperation['op'] | undefined {
  const op = raw.toLowerCase();
  return op === 'add' || op === 'replace' || op === 'remove' ? op : undefined;
}

export function readPatch(body: unknown): PatchOperation[] {
  const parsed = patchBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ScimError('validation_error', `${issue.path.join('.') || 'body'}: ${issue.message}`, 'invalidSyntax');
  }
  return parsed.data.Operations.map((o) => {
    const op = patchOp(o.op);
    if (!op) throw new ScimError('validation_error', 'op must be add, replace or remove', 'invalidSyntax');
    if (op !== 'remove' && o.value === undefined) throw new ScimError('validation_error', `${o.op} needs a value`, 'invalidValue');
    const value = o.value !== undefined ? { value: o.value } : {};
    if (op === 'remove') {
      if (!o.path) throw new ScimError('validation_error', 'remove needs a path', 'noTarget');
      return { op, path: o.path, ...value };
    }
    return { op, ...(o.path !== undefined ? { path: o.path } : {}), ...value };
  });
}
