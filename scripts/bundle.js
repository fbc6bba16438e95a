#!/usr/bin/env node
// Second build step (after `tsc -p tsconfig.build.json`): bundles the server's compiled module graph into one file,
// dist/src/server.bundle.js, and puts the production entry in front of it: dist/src/server.js, what `npm start` and
// production run, is the build of src/boot.ts, which runs the bundle with a V8 code cache (issue 33: a start does not
// compile again what the last one compiled). Issue 10: Node spent about 40 % of a start resolving and reading some
// 600 module files (stat, package.json lookups, realpath); one file removes that work and the start to first /health
// 200 falls by about a third (docs/performance.md). The CLIs (dist/src/cli/*) stay unbundled.
//
// Left outside the bundle, loaded from node_modules when first used:
// - native or WebAssembly code and packages that read their own files (bcrypt, swagger-ui-dist, the
//   WebAuthn browser script, pino-pretty, thread-stream, which pino requires at load for worker transports, and
//   graphile-worker, the webhook queue);
// - what a start does not need, so that it is not even parsed at start (the WebAuthn server stack, jose, nodemailer,
//   qrcode, otpauth, the Redis client, the user import's CSV parser, undici, the SAML XML stack);
// - the drivers of other databases that knex names but never loads here.
// And left out altogether: zod's message locales but English (zodEnglishOnly below).
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');
const entry = path.join(root, 'dist', 'src', 'server.js');
const bundled = path.join(root, 'dist', 'src', 'server.bundle.js');
const boot = path.join(root, 'dist', 'src', 'boot.js');

const EXTERNAL = [
  '@node-rs/bcrypt',
  '@node-rs/argon2',
  'swagger-ui-dist',
  '@simplewebauthn/browser',
  'pino-pretty',
  'thread-stream',
  '@simplewebauthn/server',
  'jose',
  // ES module only, loaded through Node's loader on first use (src/lib/openid-client.ts)
  'openid-client',
  'nodemailer',
  'qrcode',
  'otpauth',
  'redis',
  'rate-limit-redis',
  // the user import's CSV parser (src/declarations/user-import.ts)
  'csv-parse',
  // the outbound HTTP client (src/lib/outbound-http.ts): webhooks, client key sets, federation, back-channel logout
  'undici',
  // the SAML XML stack (src/lib/saml-xml.ts)
  '@xmldom/xmldom',
  'xml-crypto',
  'xml-encryption',
  // PostgreSQL's driver: graphile-worker (outside the bundle) requires it from node_modules, and a bundled copy for knex
  // and the pool would be a second one in memory.
  'pg',
  // graphile-worker reads its own SQL migrations (node_modules/graphile-worker/sql) and loads its config at run time.
  'graphile-worker',
  // knex's other dialects and pg's optional native binding
  'pg-native',
  'pg-query-stream',
  'sqlite3',
  'better-sqlite3',
  'mysql',
  'mysql2',
  'mariadb',
  'oracledb',
  'tedious',
];

async function bundle() {
  const esbuild = require('esbuild');
  const out = `${entry}.bundle`;
  try {
    await build(esbuild, out);
    asciiOnly(out);
    // The map was written for the temporary name: point the bundle at the final one.
    const text = fs
      .readFileSync(out, 'utf8')
      .replace(/\/\/# sourceMappingURL=\S+\s*$/, `//# sourceMappingURL=${path.basename(bundled)}.map\n`);
    fs.writeFileSync(out, text);
    fs.renameSync(`${out}.map`, `${bundled}.map`);
  } catch (err) {
    // Never leave tsc's unbundled entry looking like a finished build (scripts/start.js would run it as one).
    fs.rmSync(entry, { force: true });
    fs.rmSync(out, { force: true });
    fs.rmSync(`${out}.map`, { force: true });
    throw err;
  }
  fs.renameSync(out, bundled);
  // The code cache of an earlier bundle (boot.ts would not use it: it checks the bundle's digest) goes with it.
  fs.rmSync(path.join(path.dirname(bundled), 'server.bundle.cache'), { force: true });
  // The entry last: a build that stopped before this point leaves no dist/src/server.js (scripts/start.js builds again).
  fs.rmSync(`${entry}.map`, { force: true });
  fs.copyFileSync(boot, entry);
  // Data files the server reads at run time (the breached-password list, src/lib/breached-passwords.ts), beside the
  // bundle so that dist/ alone is a complete server (the Dockerfile copies only dist/).
  fs.cpSync(path.join(root, 'assets'), path.join(root, 'dist', 'assets'), { recursive: true });
}

/**
 * V8 keeps a script's source in memory for as long as the script lives, one byte per character when it is all
 * Latin-1 and two bytes otherwise: a single `—` in a comment doubled the bundle's 4.4 million characters to 8.4 MB
 * of heap (issue 10, heap snapshot). esbuild already escapes strings, templates and regular expressions
 * (charset ascii), so what is left outside ASCII is comment text, written here as `\u{…}`; a line that is not a
 * comment fails the build instead.
 */
function asciiOnly(file) {
  const text = fs.readFileSync(file, 'utf8');
  let inBlock = false;
  const lines = text.split('\n').map((line, i) => {
    const trimmed = line.trimStart();
    const comment = inBlock || trimmed.startsWith('//') || trimmed.startsWith('/*') || trimmed.startsWith('*');
    if (trimmed.startsWith('/*') && !trimmed.includes('*/')) inBlock = true;
    else if (inBlock && line.includes('*/')) inBlock = false;
    const first = line.search(/[^\x00-\x7f]/);
    if (first === -1) return line;
    const slashes = line.indexOf('//');
    if (!comment && !(slashes !== -1 && slashes < first))
      throw new Error(`bundle line ${i + 1} has a non-ASCII character outside a comment`);
    return line.replace(/[^\x00-\x7f]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
  });
  fs.writeFileSync(file, lines.join('\n'));
}

/**
 * zod's message locales: `zod` (core and classic) re-exports all 64 of them as `locales`, so a bundle would hold and
 * evaluate every one at start (about 1.2 MB of heap and 0.4 MB of source, issue 33). The server reads zod's English
 * messages only (classic's default, which zod loads from `locales/en` itself): the bundle's `locales` is English
 * alone. docs/performance.md has the figures.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.cjs$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: path.join(path.dirname(args.importer), '..', 'locales', 'index.cjs'), namespace: 'zod-english-only' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: 'exports.en = require("./en.cjs").default;\n',
      resolveDir: path.dirname(args.path),
      loader: 'js',
    }));
  },
};

async function build(esbuild, out) {
  await esbuild.build({
    plugins: [zodEnglishOnly],
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: EXTERNAL,
    // No name-preserving wrappers (they cost start-up time): the error classes set `name` themselves, which is what
    // error logs and checks read; a name esbuild renames on a collision only shows in a stack trace.
    keepNames: false,
    charset: 'ascii',
    // Without comments and indentation (names and statements untouched): V8 keeps the source of a script for its
    // whole life, and whitespace and comments were 30 % of it (issue 10: −6 MB of heap). Stack traces name the
    // bundle's long lines; the linked map (dist/src/server.bundle.js.map, not read unless asked) turns them back into the
    // compiled files' lines with `node --enable-source-maps` (docs/operations.md).
    minifyWhitespace: true,
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'error',
  });
}

module.exports = { bundle, EXTERNAL };

if (require.main === module) {
  bundle().catch((err) => {
    process.stderr.write(`Bundling failed: ${err.message}\n`);
    process.exit(1);
  });
}
