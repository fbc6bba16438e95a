import { z } from 'zod';
import { formMapping, list, text } from '../action';

/** The SCIM forms: a connection's name and description, and the roles a group is mapped to, as the API's bodies. */
export const connectionBody = formMapping({ form: z.object({ name: text(300), description: text(600) }), input: (f) => f, field: 'name' });
export const rolesBody = formMapping({ form: z.object({ role_ids: list() }), input: (f) => f, field: 'role_ids' });
