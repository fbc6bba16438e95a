import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { escapesIn } from '../../scripts/type-escapes';

/** The layering rules of docs/architecture.md that a reader of the imports can check. */
const SRC = path.join(__dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const files = sources(SRC).map((file) => ({ file: path.relative(SRC, file), text: readFileSync(file, 'utf8') }));

test('only src/db (repositories and the pool) imports knex', () => {
  const offenders = files
    .filter((f) => !f.file.startsWith(`db${path.sep}`) && /from 'knex'|require\('knex'\)/.test(f.text))
    .map((f) => f.file);
  expect(files.length).toBeGreaterThan(50);
  expect(offenders).toEqual([]);
});

test('routes (and the wire shapes they read) never reach a repository: they call services', () => {
  const offenders = files.filter(
    (f) =>
      (f.file.startsWith(`routes${path.sep}`) || f.file.startsWith(`wire${path.sep}`)) &&
      /from '(\.\.\/)+db\/repositories\/[^']+'/.test(f.text.replace(/import type[^;]+;/g, '')),
  );
  expect(offenders.map((f) => f.file)).toEqual([]);
});

/** The code of a file without comments and string literals (prose may say "any"). */
const codeOf = (text: string) =>
  text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '')
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''");

test('no `any` between routers and services', () => {
  expect(codeOf("const a = 'as any'; // x: any\nlet b: any = 1 as any;")).toMatch(/b: any = 1 as any/);
  const offenders = files
    .filter((f) => ['routes', 'wire', 'services'].some((layer) => f.file.startsWith(`${layer}${path.sep}`)))
    .filter((f) => /\bas any\b|:\s*any\b|<any>/.test(codeOf(f.text)))
    .map((f) => f.file);
  expect(offenders).toEqual([]);
});

test('no `as` cast in routers, schemas and presenters: handlers get typed input from their declaration', () => {
  // Counted by the TypeScript parser (scripts/type-escapes.ts): `import { a as b }` and `import * as m` are not casts.
  const casts = (file: string, text: string) => escapesIn(file, text).filter((e) => e.kind === 'as').length;
  expect(casts('x.ts', "import * as m from 'm';\nimport { a as b } from 'c';\nconst x = y as unknown as Z; const k = [1] as const;")).toBe(
    2,
  );
  const offenders = files
    .filter((f) => f.file.startsWith(`routes${path.sep}`) || f.file.startsWith(`wire${path.sep}`))
    .map((f) => ({ file: f.file, casts: casts(f.file, f.text) }))
    // route.ts erases each declaration's input type once, where it builds exactly that input at runtime.
    .filter((f) => f.casts > (f.file === path.join('routes', 'route.ts') ? 1 : 0));
  expect(offenders).toEqual([]);
});

test('one sign-in ending: only completeSignIn records a successful sign-in, and only signedInCookies builds its cookies with the CSRF rotation', () => {
  const recorders = files.filter((f) => /type: 'auth\.login\.succeeded'/.test(f.text)).map((f) => f.file);
  expect(recorders).toEqual([path.join('services', 'sessions.service.ts')]);
  // The API's `signedIn` and the pages' `finishSignIn` both take their cookies from `signedInCookies` (routes/shared.ts).
  const rotators = files.filter((f) => /\brotatedCsrf\(/.test(codeOf(f.text))).map((f) => f.file);
  expect(rotators.sort()).toEqual([path.join('middleware', 'csrf.ts'), path.join('routes', 'shared.ts')].sort());
});
