import { SCHEMA, type Resource } from './resources';

/**
 * The discovery documents of RFC 7644 §4 / RFC 7643 §5–§7: what this server supports (PATCH, filter, ETags; not
 * bulk, sort or password changes), its resource types and the schemas of the attributes it keeps.
 */

const DOCS = 'https://www.rfc-editor.org/rfc/rfc7644';

export function serviceProviderConfig(baseUrl: string): Resource {
  return {
    schemas: [SCHEMA.serviceProviderConfig],
    documentationUri: DOCS,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: 1000 },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'The token of a SCIM connection, created by an administrator and shown once',
        specUri: 'https://www.rfc-editor.org/rfc/rfc6750',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/scim/v2/ServiceProviderConfig` },
  };
}

export function resourceTypes(baseUrl: string): Resource[] {
  return [
    {
      schemas: [SCHEMA.resourceType],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'An account (userName is its email address)',
      schema: SCHEMA.user,
      schemaExtensions: [{ schema: SCHEMA.enterprise, required: false }],
      meta: { resourceType: 'ResourceType', location: `${baseUrl}/scim/v2/ResourceTypes/User` },
    },
    {
      schemas: [SCHEMA.resourceType],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'A group of accounts, which administrators may map to roles',
      schema: SCHEMA.group,
      meta: { resourceType: 'ResourceType', location: `${baseUrl}/scim/v2/ResourceTypes/Group` },
    },
  ];
}

interface Attr {
  name: string;
  type: 'string' | 'boolean' | 'complex' | 'reference' | 'dateTime';
  multiValued?: boolean;
  required?: boolean;
  caseExact?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned?: 'always' | 'default' | 'never' | 'request';
  uniqueness?: 'none' | 'server' | 'global';
  description: string;
  subAttributes?: Attr[];
  referenceTypes?: string[];
}

function attribute(a: Attr): Record<string, unknown> {
  return {
    name: a.name,
    type: a.type,
    multiValued: a.multiValued ?? false,
    description: a.description,
    required: a.required ?? false,
    caseExact: a.caseExact ?? false,
    mutability: a.mutability ?? 'readWrite',
    returned: a.returned ?? 'default',
    uniqueness: a.uniqueness ?? 'none',
    ...(a.referenceTypes ? { referenceTypes: a.referenceTypes } : {}),
    ...(a.subAttributes ? { subAttributes: a.subAttributes.map(attribute) } : {}),
  };
}

const s = (name: string, description: string, extra: Partial<Attr> = {}): Attr => ({ name, type: 'string', description, ...extra });

const USER_ATTRIBUTES: Attr[] = [
  s('userName', "The account's email address (case-insensitive, unique)", { required: true, uniqueness: 'server' }),
  {
    name: 'name',
    type: 'complex',
    description: 'The name of the person',
    subAttributes: [
      s('formatted', 'givenName familyName', { mutability: 'readOnly' }),
      s('givenName', 'First name'),
      s('familyName', 'Last name'),
    ],
  },
  s('displayName', 'The name to display (kept per connection)'),
  {
    name: 'emails',
    type: 'complex',
    multiValued: true,
    description: "The account's one address; when userName is not an email address, the primary value is the account's email",
    subAttributes: [
      s('value', 'Email address'),
      s('type', 'Always work'),
      { name: 'primary', type: 'boolean', description: 'Always true' },
    ],
  },
  { name: 'active', type: 'boolean', description: 'false signs the person out everywhere at once and refuses sign-in' },
  {
    name: 'groups',
    type: 'complex',
    multiValued: true,
    mutability: 'readOnly',
    description: "The connection's groups the account is a member of (changed through the Group resource)",
    subAttributes: [
      s('value', 'The id of a Group', { mutability: 'readOnly', caseExact: true }),
      { name: '$ref', type: 'reference', referenceTypes: ['Group'], mutability: 'readOnly', description: 'The URI of the Group' },
      s('display', 'The displayName of the Group', { mutability: 'readOnly' }),
      s('type', 'Always direct (no nested groups)', { mutability: 'readOnly' }),
    ],
  },
];

const GROUP_ATTRIBUTES: Attr[] = [
  s('displayName', 'The name of the group', { required: true }),
  {
    name: 'members',
    type: 'complex',
    multiValued: true,
    description: 'The accounts in the group',
    subAttributes: [
      s('value', 'The id of a User', { mutability: 'immutable', caseExact: true }),
      { name: '$ref', type: 'reference', referenceTypes: ['User'], mutability: 'immutable', description: 'The URI of the User' },
      s('type', 'Always User', { mutability: 'immutable' }),
    ],
  },
];

const ENTERPRISE_ATTRIBUTES: Attr[] = [
  s('employeeNumber', 'Employee number'),
  s('costCenter', 'Cost center'),
  s('organization', 'Organization'),
  s('division', 'Division'),
  s('department', 'Department'),
  {
    name: 'manager',
    type: 'complex',
    description: 'The manager',
    subAttributes: [s('value', 'The id of the manager'), s('displayName', 'The name of the manager', { mutability: 'readOnly' })],
  },
];

export function schemas(baseUrl: string): Resource[] {
  const doc = (id: string, name: string, description: string, attrs: Attr[]) => ({
    schemas: [SCHEMA.schema],
    id,
    name,
    description,
    attributes: attrs.map(attribute),
    meta: { resourceType: 'Schema', location: `${baseUrl}/scim/v2/Schemas/${id}` },
  });
  return [
    doc(SCHEMA.user, 'User', 'An account', USER_ATTRIBUTES),
    doc(SCHEMA.group, 'Group', 'A group of accounts', GROUP_ATTRIBUTES),
    doc(SCHEMA.enterprise, 'EnterpriseUser', 'Enterprise User (accepted and stored as sent)', ENTERPRISE_ATTRIBUTES),
  ];
}
