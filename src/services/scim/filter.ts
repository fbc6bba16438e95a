import { parse, type Filter } from 'scim2-parse-filter';
import type { ScimCompareOp, ScimCondition } from '../../db/repositories/scim.repo';
import { ScimError } from '../../errors';
import { isSingleEmailAddress } from '../../lib/email-address';

/**
 * SCIM filters (RFC 7644 §3.4.2.2) compiled to the condition tree the repository turns into parameterised SQL. The
 * grammar is scim2-parse-filter's; what an attribute is (its type, whether strings compare case-exactly, whether it
 * is multi-valued) is this closed catalogue. Anything else, an unknown attribute or a comparison the attribute's type
 * does not have, is 400 `invalidFilter`; a filter never reaches the database as text.
 */

type AttributeType = 'string' | 'boolean' | 'dateTime';

interface Attribute {
  /** The repository's name for it. */
  name: string;
  type: AttributeType;
  caseExact: boolean;
}

export interface FilterCatalogue {
  /** Core schema URN: a fully qualified attribute (`urn:…:User:userName`) means the same as the short one. */
  urn: string;
  /** Single-valued attributes by lower-cased path. */
  single: Record<string, Attribute>;
  /** Multi-valued attributes by lower-cased name: their sub-attributes by lower-cased name. */
  multi: Record<string, { name: string; sub: Record<string, Attribute> }>;
}

const str = (name: string, caseExact = false): Attribute => ({ name, type: 'string', caseExact });

export const USER_FILTERS: FilterCatalogue = {
  urn: 'urn:ietf:params:scim:schemas:core:2.0:user',
  single: {
    id: str('id', true),
    username: str('userName'),
    externalid: str('externalId', true),
    displayname: str('displayName'),
    'name.givenname': str('name.givenName'),
    'name.familyname': str('name.familyName'),
    'name.formatted': str('name.formatted'),
    active: { name: 'active', type: 'boolean', caseExact: true },
    'meta.created': { name: 'meta.created', type: 'dateTime', caseExact: true },
    'meta.lastmodified': { name: 'meta.lastModified', type: 'dateTime', caseExact: true },
  },
  multi: {
    emails: {
      name: 'emails',
      sub: { value: str('value'), type: str('type'), primary: { name: 'primary', type: 'boolean', caseExact: true } },
    },
  },
};

export const GROUP_FILTERS: FilterCatalogue = {
  urn: 'urn:ietf:params:scim:schemas:core:2.0:group',
  single: {
    id: str('id', true),
    displayname: str('displayName'),
    externalid: str('externalId', true),
    'meta.created': { name: 'meta.created', type: 'dateTime', caseExact: true },
    'meta.lastmodified': { name: 'meta.lastModified', type: 'dateTime', caseExact: true },
  },
  multi: { members: { name: 'members', sub: { value: str('value', true) } } },
};

/** Longer filters are refused before parsing (a directory's filters are one or two comparisons). */
export const MAX_FILTER_LENGTH = 2000;
/** At most this many comparisons in one filter. */
const MAX_CONDITIONS = 50;

const invalid = (message: string) => new ScimError('validation_error', message, 'invalidFilter');

/** Parses and compiles `filter`; every problem is a 400 `invalidFilter`. */
export function compileFilter(filter: string, catalogue: FilterCatalogue): ScimCondition {
  if (filter.length > MAX_FILTER_LENGTH) throw invalid(`The filter is longer than ${MAX_FILTER_LENGTH} characters`);
  let ast: Filter;
  try {
    ast = parse(filter);
  } catch {
    throw invalid('The filter is not valid SCIM filter syntax (RFC 7644 §3.4.2.2)');
  }
  const count = { n: 0 };
  return compile(ast, catalogue, undefined, count);
}

function stripUrn(path: string, catalogue: FilterCatalogue): string {
  const lower = path.toLowerCase();
  return lower.startsWith(`${catalogue.urn}:`) ? lower.slice(catalogue.urn.length + 1) : lower;
}

function compile(
  f: Filter,
  catalogue: FilterCatalogue,
  inner: { name: string; sub: Record<string, Attribute> } | undefined,
  count: { n: number },
): ScimCondition {
  if (++count.n > MAX_CONDITIONS) throw invalid(`The filter has more than ${MAX_CONDITIONS} terms`);
  const opName: string = f.op;
  switch (f.op) {
    case 'and':
    case 'or':
      return { kind: f.op, conditions: f.filters.map((x) => compile(x, catalogue, inner, count)) };
    case 'not':
      return { kind: 'not', condition: compile(f.filter, catalogue, inner, count) };
    case '[]': {
      if (inner) throw invalid('A value path cannot be nested in another');
      const multi = catalogue.multi[stripUrn(f.attrPath, catalogue)];
      if (!multi) throw invalid(`${f.attrPath} is not a multi-valued attribute that can be filtered`);
      return { kind: 'some', attribute: multi.name, condition: compile(f.valFilter, catalogue, multi, count) };
    }
    case 'pr': {
      const target = resolve(f.attrPath, catalogue, inner);
      if (!target.attribute) return { kind: 'some', attribute: target.multi, condition: { kind: 'constant', value: true } };
      const present: ScimCondition = { kind: 'present', attribute: target.attribute.name };
      return target.multi ? { kind: 'some', attribute: target.multi, condition: present } : present;
    }
    case 'eq':
    case 'ne':
    case 'co':
    case 'sw':
    case 'ew':
    case 'gt':
    case 'ge':
    case 'lt':
    case 'le': {
      // scim2-parse-filter lower-cases operators (`EQ` is `eq`), so the case labels are the grammar's.
      const { op } = f;
      const cmp = f;
      const target = resolve(cmp.attrPath, catalogue, inner);
      if (!target.attribute) throw invalid(`${cmp.attrPath} is multi-valued: compare one of its sub-attributes`);
      const condition: ScimCondition = {
        kind: 'compare',
        attribute: target.attribute.name,
        op,
        value: comparable(target.attribute, op, cmp.compValue, cmp.attrPath),
        caseExact: target.attribute.caseExact,
      };
      if (target.attribute.name === 'userName' && op === 'eq' && typeof condition.value === 'string')
        return userNameEquals(condition.value);
      return target.multi ? { kind: 'some', attribute: target.multi, condition } : condition;
    }
    default:
      throw invalid(`Unknown operator ${opName}`);
  }
}

/**
 * `userName eq "…"`, the filter every directory sends before it creates a user, answered by an index: userName is the
 * directory's own userName when it sent one that is not an email address (kept per connection), else the account's
 * email (stored lower-cased). An email-shaped value can only be the second; any other value only the first.
 */
function userNameEquals(value: string): ScimCondition {
  if (isSingleEmailAddress(value)) {
    return {
      kind: 'and',
      conditions: [
        { kind: 'compare', attribute: 'accountEmail', op: 'eq', value: value.trim().toLowerCase(), caseExact: true },
        { kind: 'not', condition: { kind: 'present', attribute: 'directoryUserName' } },
      ],
    };
  }
  return { kind: 'compare', attribute: 'directoryUserName', op: 'eq', value, caseExact: false };
}

/** An attribute path as the catalogue knows it: a single attribute, or a sub-attribute of a multi-valued one. */
function resolve(
  attrPath: string,
  catalogue: FilterCatalogue,
  inner: { sub: Record<string, Attribute> } | undefined,
): { attribute: Attribute; multi?: string } | { attribute?: undefined; multi: string } {
  if (typeof attrPath !== 'string') throw invalid('Missing attribute');
  const path = stripUrn(attrPath, catalogue);
  if (inner) {
    const attribute = inner.sub[path];
    if (!attribute) throw invalid(`${attrPath} cannot be filtered on`);
    return { attribute };
  }
  const single = catalogue.single[path];
  if (single) return { attribute: single };
  const [head, sub, ...rest] = path.split('.');
  const multi = catalogue.multi[head];
  if (multi && rest.length === 0) {
    if (sub === undefined) return { multi: multi.name };
    const attribute = multi.sub[sub];
    if (attribute) return { attribute, multi: multi.name };
  }
  throw invalid(`${attrPath} cannot be filtered on`);
}

function comparable(attribute: Attribute, op: ScimCompareOp, value: unknown, path: string): string | boolean | Date | null {
  if (value === null) {
    if (op !== 'eq' && op !== 'ne') throw invalid(`${path}: null can only be compared with eq or ne`);
    return null;
  }
  switch (attribute.type) {
    case 'boolean':
      if (typeof value !== 'boolean') throw invalid(`${path} is a boolean: compare it with true or false`);
      if (op !== 'eq' && op !== 'ne') throw invalid(`${path} is a boolean: only eq and ne apply`);
      return value;
    case 'dateTime': {
      if (typeof value !== 'string') throw invalid(`${path} is a dateTime: compare it with a quoted xsd:dateTime`);
      if (op === 'co' || op === 'sw' || op === 'ew') throw invalid(`${path} is a dateTime: ${op} does not apply`);
      const date = new Date(value);
      if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(date.getTime())) throw invalid(`${path}: ${value} is not an xsd:dateTime`);
      return date;
    }
    case 'string':
      if (typeof value !== 'string') throw invalid(`${path} is a string: compare it with a quoted string`);
      if (value.length > 1000) throw invalid(`${path}: the value is too long`);
      if (value.includes('\u0000')) throw invalid(`${path}: the value contains a NUL character`);
      return value;
  }
}
