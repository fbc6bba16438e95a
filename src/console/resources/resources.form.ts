import { z } from 'zod';
import type { ApiResource } from '../../wire/admin/admin.schemas';
import type { ResourceValues } from '../../views/console/resources';
import { checkbox, formMapping, text } from '../action';

/** The API resource form (CONTRACT §12): its fields, as the API's body and from its wire shape. */
const resourceForm = z.object({
  identifier: text(2100),
  name: text(300),
  scopes: text(10_000),
  access_token_ttl_s: text(20),
  open_registration: checkbox(),
  dpop_bound_access_tokens: checkbox(),
  role_based_access: checkbox(),
});

/** The form as the API body; a lifetime that is not a number stays a string, so that the API's schema names it. */
export const resourceBody = formMapping({
  form: resourceForm,
  input: (f) => {
    const ttl = f.access_token_ttl_s.trim();
    return {
      ...f,
      identifier: f.identifier.trim(),
      scopes: f.scopes.split(/\s+/).filter(Boolean),
      access_token_ttl_s: ttl === '' ? undefined : /^-?\d+$/.test(ttl) ? Number(ttl) : ttl,
    };
  },
  field: 'identifier',
});

export const valuesOf = (r?: ApiResource): ResourceValues => ({
  identifier: r?.identifier ?? '',
  name: r?.name ?? '',
  scopes: r?.scopes.join(' ') ?? '',
  access_token_ttl_s: String(r?.access_token_ttl_s ?? 3600),
  open_registration: r?.open_registration ?? false,
  dpop_bound_access_tokens: r?.dpop_bound_access_tokens ?? false,
  role_based_access: r?.role_based_access ?? false,
});
