import path from 'node:path';
import { escapesBelow, escapesIn } from '../../scripts/type-escapes';

/**
 * Issue 31's gate on type escapes in src/, counted by the TypeScript parser (scripts/type-escapes.ts): the bounds only
 * go down. When a change removes casts, lower the bound to the new count in the same commit.
 */
const BOUNDS = { as: 66, nonNull: 0 };

const all = escapesBelow(path.join(__dirname, '../../src'));

test('the counter sees casts and `!` as the compiler does, and not `as const` or prose', () => {
  const found = escapesIn(
    'x.ts',
    "const a = b as unknown as C; const k = [1] as const; const d = <E>f; const g = h!.i; // x as Y\nconst s = 'p as Q';",
  );
  expect(found.map((e) => e.kind)).toEqual(['as', 'as', 'as', 'non-null']);
});

test(`at most ${BOUNDS.as} \`as\` casts in src/ (not \`as const\`)`, () => {
  expect(all.filter((e) => e.kind === 'as').length).toBeLessThanOrEqual(BOUNDS.as);
});

test(`at most ${BOUNDS.nonNull} non-null \`!\` assertions in src/`, () => {
  expect(all.filter((e) => e.kind === 'non-null').length).toBeLessThanOrEqual(BOUNDS.nonNull);
});
