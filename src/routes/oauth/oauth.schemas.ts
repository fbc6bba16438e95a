import { z } from 'zod';
import { OAuthError } from '../../errors';

const param = (name: string, max = 4096) =>
  z.string({ error: `${name} must be a single string` }).max(max, `${name} is too long`).optional();

/** Token endpoint parameters (RFC 6749 §4.1.3, §6), form-urlencoded or JSON. */
export const tokenParams = z.object({
  grant_type: param('grant_type', 100),
  code: param('code', 512),
  redirect_uri: param('redirect_uri', 2048),
  code_verifier: param('code_verifier', 256),
  refresh_token: param('refresh_token', 8192),
  scope: param('scope', 1024),
  client_id: z.unknown().optional(),
  client_secret: z.unknown().optional(),
});

/** RFC 7009 §2.1. */
export const revokeParams = z.object({
  token: param('token', 8192),
  token_type_hint: param('token_type_hint', 100),
  client_id: z.unknown().optional(),
  client_secret: z.unknown().optional(),
});

/** Body of approve / deny and the query of consent-info. */
export const consentRequestBody = z.object({
  request_id: z.uuid({ error: 'request_id must be a uuid' }),
});

/**
 * Parses OAuth parameters; problems are RFC 6749 invalid_request (never the generic validation_error body).
 * A parameter repeated in a form body arrives as an array and is refused (RFC 6749 §3.2).
 */
export function parseOAuthParams<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new OAuthError('invalid_request', issue.message);
  }
  return result.data;
}

