import type { z } from 'zod';

/** A message a schema declares for a refusal, where it sits (object keys; `*` for an array element or record value). */
export interface DeclaredMessage {
  path: string[];
  message: string;
  /** The catalogue key a refinement gave it (`params: { said }`), when it did. */
  saidKey?: string;
  /** A refinement (`refine`, `check`): zod cannot say what it checked, so only a catalogue key translates it. */
  custom: boolean;
}

type Def = Record<string, unknown> & { type?: string; error?: unknown; checks?: unknown[]; params?: unknown };
const defOf = (s: unknown): Def | undefined =>
  typeof s === 'object' && s !== null && '_zod' in s ? ((s as { _zod: { def: Def } })._zod.def ?? undefined) : undefined;

export const isZodSchema = (v: unknown): v is z.ZodType => defOf(v) !== undefined;

/** What an `error` option says for a refused input (a string, or a function of the issue; tried with two inputs). */
function messagesOfError(error: unknown): string[] {
  if (typeof error !== 'function') return [];
  const out = new Set<string>();
  for (const input of [undefined, 'x', 5]) {
    try {
      const said: unknown = (error as (issue: unknown) => unknown)({ code: 'custom', input, path: [], message: '' });
      const text =
        typeof said === 'string' ? said : typeof said === 'object' && said !== null && 'message' in said ? said.message : undefined;
      if (typeof text === 'string') out.add(text);
    } catch {
      // an error function that needs a real issue: nothing declared to read
    }
  }
  return [...out];
}

function saidKeyOf(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || !('said' in params)) return undefined;
  const said = params.said;
  return typeof said === 'object' && said !== null && 'key' in said && typeof said.key === 'string' ? said.key : undefined;
}

/**
 * Every refusal message a zod schema declares (its own `error`, its checks', its refinements'), walking objects,
 * arrays, unions, pipes, wrappers and lazies. Zod's own default messages are not listed (they are keyed by the check).
 */
export function declaredMessages(schema: unknown, path: string[] = [], seen = new Set<unknown>()): DeclaredMessage[] {
  const def = defOf(schema);
  if (!def || seen.has(schema)) return [];
  seen.add(schema);
  const found: DeclaredMessage[] = [];
  const add = (d: Def) => {
    const saidKey = saidKeyOf(d.params);
    const custom = d.type === 'custom' || d.check === 'custom';
    for (const message of messagesOfError(d.error)) found.push({ path, message, custom, ...(saidKey ? { saidKey } : {}) });
  };
  add(def);
  for (const check of def.checks ?? []) {
    const c = defOf(check);
    if (c) add(c);
  }
  const walk = (child: unknown, at: string[] = path) => found.push(...declaredMessages(child, at, seen));
  if (def.shape && typeof def.shape === 'object') {
    for (const [key, child] of Object.entries(def.shape as Record<string, unknown>)) walk(child, [...path, key]);
  }
  if (def.catchall) walk(def.catchall, [...path, '*']);
  if (def.element) walk(def.element, [...path, '*']);
  if (def.valueType) walk(def.valueType, [...path, '*']);
  if (def.keyType) walk(def.keyType, [...path, '*']);
  for (const key of ['innerType', 'in', 'out', 'left', 'right', 'schema', 'rest'] as const) if (def[key]) walk(def[key]);
  for (const key of ['options', 'items'] as const) if (Array.isArray(def[key])) for (const child of def[key] as unknown[]) walk(child);
  if (def.type === 'lazy' && typeof def.getter === 'function') walk((def.getter as () => unknown)());
  return found;
}
