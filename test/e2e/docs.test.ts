import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { makeSignedInUser } from '../helpers/factories';
import { ROOT } from '../helpers/processes';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The docs a newcomer reads in a fresh clone: they stand on their own (nothing points outside the repository), their
 * links resolve, their tables render, and what they state about the running server is what it does.
 */
function markdownFiles(): string[] {
  const found = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules') walk(rel);
      else if (entry.name.endsWith('.md')) found.push(rel);
    }
  };
  walk('docs');
  walk('examples');
  return found;
}
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const FILES = markdownFiles();

test.each(FILES)('%s refers to nothing outside the repository', (file) => {
  const text = read(file);
  for (const outside of [/\.\.\/shared/, /\bshared\/(spec|CONTRACT)/, /CONTRACT/, /interface-spec/, /\bspec §/i]) {
    expect({ file, match: outside.exec(text)?.[0] ?? null }).toEqual({ file, match: null });
  }
});

test.each(FILES)('%s: every relative link names a file of the repository', (file) => {
  const text = read(file).replace(/```[\s\S]*?```/g, '');
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target!) || target!.startsWith('#')) continue;
    const filePart = target!.split('#')[0]!;
    if (!fs.existsSync(path.resolve(ROOT, path.dirname(file), filePart))) broken.push(target!);
  }
  expect(broken).toEqual([]);
});

test('README: the commands table is one table (no row falls out of it into plain text)', () => {
  const section = read('README.md').split('\n## Commands\n')[1]!.split('\n## ')[0]!;
  const lines = section.split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  let end = start;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  const table = lines.slice(start, end);
  expect(lines.filter((l) => l.startsWith('|'))).toEqual(table);
  const commands = ['npm start', 'npm run dev', 'npm test', 'npm run migrate', 'npm run prune', 'npm run admin', 'npm run bench'];
  commands.push('npm run build');
  for (const command of commands) {
    expect(table.some((row) => row.startsWith(`| \`${command}`))).toBe(true);
  }
});

test('$ADMIN_TOKEN is explained wherever it is used: the README shows both sign-in steps with curl', () => {
  const readme = read('README.md');
  expect(readme).toMatch(/ADMIN_TOKEN=\$\(curl -s -X POST "\$SSO_URL\/api\/auth\/login"/);
  expect(readme).toMatch(/mfa_required/);
  expect(readme).toMatch(/ADMIN_TOKEN=\$\(curl -s -X POST "\$SSO_URL\/api\/auth\/login\/mfa"/);
  expect(readme).toMatch(/### An administrator's access token/);
  for (const file of FILES.filter((f) => f !== 'README.md' && read(f).includes('$ADMIN_TOKEN'))) {
    expect({ file, explained: read(file).includes('README.md#an-administrators-access-token') }).toEqual({ file, explained: true });
  }
});

test('token lifetimes in the guides are the ones the tokens carry', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-docs-'));
  const config = loadConfig({ DATA_DIR: dataDir, JWT_ACCESS_SECRET: 'a'.repeat(32), JWT_REFRESH_SECRET: 'b'.repeat(32) });
  const accessHours = config.accessTokenTtlSeconds / 3600;
  const refreshDays = config.refreshTokenTtlSeconds / 86400;
  const cookieHours = config.accessCookieMaxAgeSeconds / 3600;
  const cookieDays = config.refreshCookieMaxAgeSeconds / 86400;
  const firstParty = read('docs/guide-first-party-apps.md');
  const { accessCookieMaxAgeSeconds: accessMaxAge, refreshCookieMaxAgeSeconds: refreshMaxAge } = config;
  expect(firstParty).toContain(`| \`accessToken\` | ${cookieHours} hour (\`Max-Age=${accessMaxAge}\`) | ${accessHours} hours`);
  expect(firstParty).toContain(`| \`refreshToken\` | ${cookieDays} days (\`Max-Age=${refreshMaxAge}\`) | ${refreshDays} days`);
  const foundation = read('docs/foundation.md');
  expect(foundation).toMatch(new RegExp(`Access token \\(HS256 JWT.*\\| ${accessHours} hours`));
  expect(foundation).toMatch(new RegExp(`Refresh token \\(HS256 JWT\\) \\| ${refreshDays} days`));
  expect(read('docs/guide-third-party-apps.md')).toContain(`access token's own \`exp\` is ${accessHours} hours`);
  // Nothing still calls the access token a one-hour token or the refresh token a seven-day one.
  for (const file of FILES) {
    const stale = /`accessToken` \(1 hour\)|`refreshToken` \(7 days/.exec(read(file));
    expect({ file, match: stale?.[0] ?? null }).toEqual({ file, match: null });
  }
});

test.each(FILES)('%s: no section heading appears twice (a section pasted twice)', (file) => {
  const headings = [
    ...read(file)
      .replace(/```[\s\S]*?```/g, '')
      .matchAll(/^(#{1,3} .+)$/gm),
  ].map((m) => m[1]!);
  expect(headings.filter((h, i) => headings.indexOf(h) !== i)).toEqual([]);
});

test('README: each configuration variable has one row', () => {
  const section = read('README.md').split('\n## Configuration\n')[1]!.split('\n## ')[0]!;
  const names = section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((row) => [...row.split(' | ')[0]!.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!));
  expect(names.length).toBeGreaterThan(30);
  expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
});

test('README: the built-in pages paragraph names each page once', () => {
  const paragraph = read('README.md').split('- **Built-in pages**')[1]!.split('\n- **')[0]!;
  const listed = ['/register', '/consent', '/device', '/forgot-password', '/set-password', '/verify-email'];
  const counts = Object.fromEntries(listed.map((page) => [page, paragraph.split(`\`${page}\``).length - 1]));
  expect(counts).toEqual(Object.fromEntries(listed.map((page) => [page, 1])));
});

test('.env.example describes the embedded PostgreSQL of today, not PGlite', () => {
  const env = read('.env.example');
  expect(env).not.toMatch(/PGlite/i);
  expect(env).toMatch(/embedded PostgreSQL/);
});

test('examples/mcp-server: a local tool is told it needs CLIENT_REGISTRATION=open or a metadata document', () => {
  const readme = read('examples/mcp-server/README.md');
  expect(readme).toMatch(/CLIENT_REGISTRATION=open/);
  expect(readme).toMatch(/A local tool[^]*CLIENT_REGISTRATION=open[^]*Metadata\s+Document/);
});

test('memory figures say they were measured with a separate PostgreSQL server', () => {
  expect(read('docs/operations.md')).toMatch(/\*\*Memory\*\* \(measured with the database in a separate PostgreSQL server/);
  expect(read('docs/performance.md')).toMatch(/Every memory \(RSS\) figure below is the server process alone/);
});

describe('permissions named in the guides exist', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  test('every permissions.includes(...) of the docs names a permission of the catalogue', async () => {
    const { bearer } = await makeSignedInUser(t, ['super_admin']);
    const catalogue = (await request(t.app).get('/api/rbac/permissions').set('Authorization', bearer)).body.permissions.map(
      (p: { name: string }) => p.name,
    ) as string[];
    const named = FILES.flatMap((file) =>
      [...read(file).matchAll(/permissions\.includes\('([^']+)'\)/g)].map((m) => ({ file, permission: m[1]! })),
    );
    for (const use of named) expect({ ...use, known: catalogue.includes(use.permission) }).toEqual({ ...use, known: true });
    expect(read('docs/guide-verifying-tokens.md')).not.toContain('reports:read');
  });
});
