#!/usr/bin/env node
// `npm start`: runs the compiled server (dist/), which is what production runs, in this same process. When a source
// file is newer than the build (a fresh clone, a pull, an edit), it builds first with `tsc -p tsconfig.build.json`,
// then bundles the server into one file (scripts/bundle.js).
// `node scripts/start.js --build-only` builds when stale and exits (npm run bench uses it).
// `node scripts/start.js --install` is the `prepare` step of `npm install` / `npm ci`: the build happens at install,
// saying so, rather than silently at the first `npm start`. It does nothing where there is nothing to build with (no
// sources yet, or no TypeScript: `npm ci --omit=dev` in the Docker image, which copies a finished dist/). The
// `prepare` script runs this file only when it exists: the Dockerfile's `npm ci` runs before scripts/ is copied.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
const entry = path.join(dist, 'src', 'server.js');
// What the entry runs (scripts/bundle.js): a build without it is no build.
const bundle = path.join(dist, 'src', 'server.bundle.js');
const SOURCES = ['src', 'migrations', 'scripts', 'knexfile.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

function newerThan(file, since) {
  let stat;
  try {
    stat = fs.statSync(file);
  } catch {
    return false;
  }
  if (!stat.isDirectory()) return stat.mtimeMs > since;
  return fs.readdirSync(file).some((name) => newerThan(path.join(file, name), since));
}

function isStale() {
  if (!fs.existsSync(entry) || !fs.existsSync(bundle)) return true;
  const builtAt = fs.statSync(entry).mtimeMs;
  return SOURCES.some((name) => newerThan(path.join(root, name), builtAt));
}

const installing = process.argv.includes('--install');
const canBuild = fs.existsSync(path.join(root, 'src')) && fs.existsSync(path.join(root, 'node_modules', 'typescript'));

if (installing && !canBuild) process.exit(0);

if (isStale()) {
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  } catch {
    tsc = undefined;
  }
  if (!tsc) {
    if (!fs.existsSync(entry) || !fs.existsSync(bundle)) {
      process.stderr.write(
        'No build in dist/ and no TypeScript to make one: run `npm install` (with dev dependencies), then `npm start`.\n',
      );
      process.exit(1);
    }
    process.stderr.write('Sources are newer than dist/ but TypeScript is not installed: starting the existing build.\n');
  } else {
    const built = fs.existsSync(entry) && fs.existsSync(bundle);
    const why = installing ? 'after npm install' : built ? 'sources newer than dist/' : 'no build in dist/ yet';
    process.stderr.write(`Building the server into dist/ (${why}): TypeScript, then one bundled file; this takes up to a minute ...\n`);
    // A clean build: no compiled file outlives its deleted source.
    fs.rmSync(dist, { recursive: true, force: true });
    const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    // The server's module graph becomes one file (scripts/bundle.js: a start reads one file instead of hundreds).
    const bundled =
      result.status === 0 ? spawnSync(process.execPath, [path.join(__dirname, 'bundle.js')], { cwd: root, stdio: 'inherit' }) : result;
    if (bundled.status !== 0) {
      process.stderr.write('Build failed: fix the errors above, or run `npm run dev` to start from the TypeScript sources.\n');
      process.exit(bundled.status ?? 1);
    }
  }
}

if (!process.argv.includes('--build-only') && !installing) require(entry);
