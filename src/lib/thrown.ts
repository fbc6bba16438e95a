/**
 * Reading what was thrown without trusting its type: a catch clause gets `unknown`, and driver, Node and body-parser
 * errors carry their facts (`code`, `constraint`, `type`, `status`…) as plain fields. Each reader checks the field's
 * type at runtime and answers undefined when it is not there.
 */
export function thrownField(err: unknown, key: string): unknown {
  return fieldOf(err, key);
}

/**
 * A field of a value whose shape is not known (a thrown value, a parsed body or query before its schema): undefined
 * when the value is not an object.
 */
export function fieldOf(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? Reflect.get(value, key) : undefined;
}

/** A string field of a thrown value (`code` of a pg or Node error, `type` of a body-parser error…). */
export function thrownString(err: unknown, key: string): string | undefined {
  const value = thrownField(err, key);
  return typeof value === 'string' ? value : undefined;
}

/** The `code` of a pg or Node error (`23505`, `ENOENT`…). */
export function thrownCode(err: unknown): string | undefined {
  return thrownString(err, 'code');
}

/** What was thrown, said in one line: an Error's message, anything else as text. */
export function thrownMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
