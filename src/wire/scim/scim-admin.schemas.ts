import { z } from 'zod';
import { messagesFor } from '../../i18n';
import { timestampField, uuidField } from '../common.schemas';

/** The API's messages, declared in the catalogue (a console form shows them in the page's language). */
const API = messagesFor('en').validation;
const CONTROL = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

const oneLine = (name: string, max: number, messages: { tooLong: string; oneLine: string }) =>
  z
    .string({ error: `${name} must be a string` })
    .trim()
    .max(max, messages.tooLong)
    .refine((v) => !CONTROL.test(v), { message: messages.oneLine });

export const createScimConnectionBody = z.strictObject({
  name: oneLine('name', 100, { tooLong: API.scimNameTooLong, oneLine: API.scimNameOneLine }).pipe(z.string().min(1, API.scimNameRequired)),
  description: oneLine('description', 500, { tooLong: API.descriptionTooLong, oneLine: API.descriptionOneLine }).optional(),
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

export const scimConnectionEnvelope = z.strictObject({ connection: scimConnection });
export const scimConnectionsBody = z.strictObject({ connections: z.array(scimConnection) });
export const createdScimConnectionBody = z.strictObject({ connection: scimConnection, token: z.string() });

export const scimGroupRoles = z
  .strictObject({
    id: z.string(),
    connection_id: z.string(),
    connection_name: z.string(),
    display_name: z.string(),
    external_id: z.string().nullable(),
    role_ids: z.array(z.string()),
  })
  .meta({ id: 'ScimGroupRoles' });

export const scimGroupRolesEnvelope = z.strictObject({ group: scimGroupRoles });
export const scimGroupsBody = z.strictObject({ groups: z.array(scimGroupRoles) });

export type ScimConnection = z.output<typeof scimConnection>;
export type ScimGroupRoles = z.output<typeof scimGroupRoles>;
