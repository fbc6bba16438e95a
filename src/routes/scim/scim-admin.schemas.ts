import { z } from 'zod';
import { timestampField, uuidField } from '../common.schemas';

const oneLine = (name: string, max: number) =>
  z
    .string({ error: `${name} must be a string` })
    .trim()
    .max(max, `${name} is too long (at most ${max} characters)`)
    .refine((v) => !/[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u.test(v), {
      message: `${name} must be one line without control characters`,
    });

export const createScimConnectionBody = z.strictObject({
  name: oneLine('name', 100).pipe(z.string().min(1, 'name is required')),
  description: oneLine('description', 500).optional(),
});

export const scimConnectionIdParams = z.object({ connectionId: uuidField('connectionId') });
export const scimGroupIdParams = z.object({ groupId: uuidField('groupId') });

export const setScimGroupRolesBody = z.strictObject({
  role_ids: z
    .array(uuidField('each role id'), { error: 'role_ids must be an array of role ids' })
    .max(100, 'at most 100 roles')
    .transform((ids) => [...new Set(ids)]),
});

export const scimConnection = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    created_at: timestampField,
    last_used_at: timestampField.nullable(),
  })
  .meta({ id: 'ScimConnection' });

export const scimConnectionsBody = z.strictObject({ connections: z.array(scimConnection) });
export const createdScimConnectionBody = z.strictObject({ connection: scimConnection, token: z.string() });

export const scimGroupRoles = z
  .strictObject({
    id: z.string(),
    connection_id: z.string(),
    display_name: z.string(),
    external_id: z.string().nullable(),
    role_ids: z.array(z.string()),
  })
  .meta({ id: 'ScimGroupRoles' });

export const scimGroupRolesEnvelope = z.strictObject({ group: scimGroupRoles });
export const scimGroupsBody = z.strictObject({ groups: z.array(scimGroupRoles) });
