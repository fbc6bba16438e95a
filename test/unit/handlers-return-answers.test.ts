import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { parseSource, sources } from '../../scripts/type-escapes';

/**
 * Handlers return what they answer (docs/architecture.md, "Outcomes"): a page, a redirect, a refused form, a JSON body,
 * a `Reply` with its cookies and headers, or a `Document` with its own media type (SCIM's JSON, the SAML metadata, the
 * scripts); the route's last step writes it. A handler receives `res` as its third argument only to write a stream.
 * This test reads every `route(decl, handler)` in
 * src/ with the TypeScript parser and lists the handlers that take that third argument (or are passed by name, which
 * it cannot read): only the streams named below may. A page or browser endpoint (the authorize error page, the SAML
 * POST page, a sign-in) that writes `res` fails it.
 */
const SRC = path.join(__dirname, '../../src');

/** The handlers that write `res` themselves, by file, with why. */
const STREAMS: Record<string, { count: number; why: string }> = {
  'console/action.ts': { count: 1, why: 'consoleStream: the audit log CSV download' },
  'routes/admin/user-import.router.ts': { count: 1, why: 'the users export, a CSV or JSON stream' },
};

interface Found {
  file: string;
  line: number;
}

/** Every `route(decl, handler)` whose handler takes a third parameter (`res`), and every read of `req.res`. */
function writersIn(file: string, text: string): Found[] {
  const source = parseSource(file, text);
  const found: Found[] = [];
  const at = (node: ts.Node) => found.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'route') {
      const handler = node.arguments[1];
      // A handler passed by name cannot be read here: it counts as a writer until it is written in place.
      const literal = handler !== undefined && (ts.isArrowFunction(handler) || ts.isFunctionExpression(handler));
      if (handler !== undefined && (!literal || handler.parameters.length >= 3)) at(node);
    }
    if (
      ts.isPropertyAccessExpression(node) &&
      node.name.text === 'res' &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'req'
    ) {
      at(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const found = sources(SRC).flatMap((full) => writersIn(path.relative(SRC, full).split(path.sep).join('/'), readFileSync(full, 'utf8')));

test('no route handler writes `res` but the streams: pages, browser endpoints and JSON answers return what they answer', () => {
  const counts: Record<string, number> = {};
  for (const f of found) counts[f.file] = (counts[f.file] ?? 0) + 1;
  const expected = Object.fromEntries(Object.entries(STREAMS).map(([file, { count }]) => [file, count]));
  expect(counts).toEqual(expected);
});

test('the scan sees a handler that takes `res` and a read of `req.res`', () => {
  const probe = [
    "route({ method: 'get', path: '/x' }, async ({ query }, req, res) => res.redirect(302, '/'));",
    "route({ method: 'get', path: '/y' }, async (_input, req) => req.res?.send('x'));",
    "route({ method: 'get', path: '/z' }, async ({ query }) => new Redirect('/'));",
    "route({ method: 'get', path: '/w' }, handler);",
  ].join('\n');
  expect(writersIn('probe.ts', probe).map((f) => f.line)).toEqual([1, 2, 4]);
});
