import { z } from 'zod';

/**
 * JSON text that crosses into the process (a file under DATA_DIR, a package.json, a jsonb column read as text) parsed
 * and checked against its schema: the value, or undefined when the text is not JSON or not of that shape.
 */
export function parseJsonText<S extends z.ZodType>(text: string, schema: S): z.infer<S> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** A jsonb column's value as a driver hands it over: parsed by pg, as text by drivers that do not parse json. */
export function jsonColumnValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  let parsed: unknown = value;
  try {
    parsed = JSON.parse(value);
  } catch {
    // Not JSON: the schema that reads it refuses the text as it is.
  }
  return parsed;
}

/** What this server reads of a package.json: its name and version. */
export const PACKAGE_VERSION = z.object({ name: z.string().optional(), version: z.string().optional() });

/** A JSON object (a jsonb column's details, a claims bag): its keys' values are left unchecked. */
export const JSON_OBJECT = z.record(z.string(), z.unknown());

/** A JSON array of strings (scopes, permissions, redirect URIs stored as JSON text). */
export const JSON_STRINGS = z.array(z.string());
