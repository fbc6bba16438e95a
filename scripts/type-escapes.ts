/**
 * Counts the type escapes in src/ with the TypeScript parser: `as` casts (not `as const`), `<T>x` assertions and
 * non-null `!` assertions. `npx tsx scripts/type-escapes.ts [--list]` prints the totals per folder (and each place with
 * --list). test/unit/type-escapes.test.ts holds the bounds so they cannot grow back.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface Escape {
  file: string;
  line: number;
  kind: 'as' | 'non-null';
  text: string;
}

/** The TypeScript sources below `dir` (not declaration files). */
export function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** One file's syntax tree, with parents set (TSX for .tsx). */
export function parseSource(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

/** Every `as` cast (but `as const`) and every non-null assertion in one file's text. */
export function escapesIn(file: string, text: string): Escape[] {
  const source = parseSource(file, text);
  const found: Escape[] = [];
  const at = (node: ts.Node, kind: Escape['kind']) =>
    found.push({
      file,
      line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
      kind,
      text: node.getText(source).replace(/\s+/g, ' ').slice(0, 100),
    });
  const visit = (node: ts.Node): void => {
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const isConst = ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === 'const';
      if (!isConst) at(node, 'as');
    } else if (ts.isNonNullExpression(node)) {
      at(node, 'non-null');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every escape below a folder (paths relative to it). */
export function escapesBelow(dir: string): Escape[] {
  return sources(dir).flatMap((full) => escapesIn(path.relative(dir, full), readFileSync(full, 'utf8')));
}

if (require.main === module) {
  const src = path.join(__dirname, '../src');
  const all = escapesBelow(src);
  const list = process.argv.includes('--list');
  for (const kind of ['as', 'non-null'] as const) {
    const mine = all.filter((e) => e.kind === kind);
    const byFolder = new Map<string, number>();
    for (const e of mine) {
      const folder = e.file.split(path.sep).slice(0, 1).join('/');
      byFolder.set(folder, (byFolder.get(folder) ?? 0) + 1);
    }
    console.log(`${kind === 'as' ? '`as` casts' : 'non-null `!`'}: ${mine.length}`);
    for (const [folder, n] of [...byFolder].sort((a, b) => b[1] - a[1])) console.log(`  ${folder}: ${n}`);
    if (list) for (const e of mine) console.log(`    ${e.file}:${e.line}  ${e.text}`);
  }
}
