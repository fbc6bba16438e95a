import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../helpers/oauth';
import { buildOnce, ROOT, startServerProcess } from '../helpers/processes';
import { createTestDatabase } from '../helpers/test-app';

/**
 * The production entry (dist/src/server.js, src/boot.ts) runs the bundle with a V8 code cache beside it (issue 33,
 * start within 1 s): written once the server listens, used by the next start, replaced when it belongs to another
 * bundle or V8 rejects it, never written under --enable-source-maps. Each test runs a copy of dist/ (its own cache).
 */
let dir: string;
let dbUrl: string;
// One set of secrets for every start: the signing key made at the first start opens with them.
const secrets = { JWT_ACCESS_SECRET: randomBytes(32).toString('hex'), JWT_REFRESH_SECRET: randomBytes(32).toString('hex') };
let dropDb: () => Promise<void>;

beforeAll(async () => {
  await buildOnce();
  const db = await createTestDatabase();
  dbUrl = db.url;
  dropDb = db.drop;
}, 300_000);

afterAll(async () => {
  await dropDb?.();
});

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-code-cache-'));
  fs.cpSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
  fs.rmSync(path.join(dir, 'dist/src/server.bundle.cache'), { force: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const cacheFile = () => path.join(dir, 'dist/src/server.bundle.cache');
const bundleDigest = () =>
  createHash('sha1')
    .update(fs.readFileSync(path.join(dir, 'dist/src/server.bundle.js')))
    .digest();

/** Starts the copy's build, waits for /health 200, then for the cache to be written (or not), and stops it. */
async function startOnce(extraEnv: NodeJS.ProcessEnv = {}): Promise<{ cache: Buffer | undefined; output: string }> {
  const port = await freePort();
  const server = await startServerProcess(
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      DATABASE_URL: dbUrl,
      BASE_URL: `http://localhost:${port}`,
      ...secrets,
      SMTP_URL: 'smtp://127.0.0.1:1',
      MAIL_FROM: 'sso@example.test',
      ...extraEnv,
    },
    port,
    150_000,
    { build: true, root: dir },
  );
  try {
    expect(await (await fetch(`${server.base}/health`)).json()).toEqual({ status: 'OK' });
    // The cache is written just after the server listens: give a loaded machine a moment.
    await new Promise((r) => setTimeout(r, 1500));
    return { cache: fs.existsSync(cacheFile()) ? fs.readFileSync(cacheFile()) : undefined, output: server.output() };
  } finally {
    expect(await server.stop()).toBe(0);
  }
}

/** The server's "listening" log line. */
function listeningLine(output: string): Record<string, unknown> {
  const line = output.split('\n').find((l) => l.includes('"msg":"service-sso listening"'));
  if (line === undefined) throw new Error(`no listening line in:\n${output}`);
  return JSON.parse(line) as Record<string, unknown>;
}

test('the first start writes the cache (the bundle digest, then V8 data; owner only); the next start uses it as it is', async () => {
  const first = await startOnce();
  expect(first.cache).toBeDefined();
  expect(listeningLine(first.output)).toMatchObject({ codeCache: 'none' });
  expect(first.cache!.subarray(0, 20).equals(bundleDigest())).toBe(true);
  expect(first.cache!.length).toBeGreaterThan(100_000);
  expect(fs.statSync(cacheFile()).mode & 0o777).toBe(0o600);
  const writtenAt = fs.statSync(cacheFile()).mtimeMs;

  // Accepted by V8: not written again.
  const second = await startOnce();
  expect(second.cache!.equals(first.cache!)).toBe(true);
  expect(fs.statSync(cacheFile()).mtimeMs).toBe(writtenAt);
  expect(fs.readdirSync(path.join(dir, 'dist/src')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  expect(listeningLine(second.output)).toMatchObject({ codeCache: 'used' });
}, 120_000);

test("a process killed between the cache's write and rename leaves a file the next write removes; a running one's stays", async () => {
  // No process has an id above Linux's largest (2^22); this test's own process runs; a name that is not a plain
  // decimal id is nobody's.
  const abandoned = path.join(dir, `dist/src/server.bundle.cache.${2 ** 22 + 1}.tmp`);
  const running = path.join(dir, `dist/src/server.bundle.cache.${process.pid}.tmp`);
  fs.writeFileSync(abandoned, 'half a cache', { mode: 0o600 });
  fs.writeFileSync(running, 'being written', { mode: 0o600 });
  const odd = path.join(dir, `dist/src/server.bundle.cache.0x10.tmp`);
  fs.writeFileSync(odd, 'not a pid', { mode: 0o600 });
  const run = await startOnce();
  expect(run.cache).toBeDefined();
  expect(fs.existsSync(abandoned)).toBe(false);
  expect(fs.readFileSync(running, 'utf8')).toBe('being written');
  expect(fs.readFileSync(odd, 'utf8')).toBe('not a pid');
}, 120_000);

test("another bundle's cache is not used and is replaced; so is one V8 rejects", async () => {
  const { cache } = await startOnce();
  // The same V8 data under another bundle's digest.
  const foreign = Buffer.from(cache!);
  foreign[0] ^= 0xff;
  fs.writeFileSync(cacheFile(), foreign, { mode: 0o600 });
  const replaced = await startOnce();
  expect(listeningLine(replaced.output)).toMatchObject({ codeCache: 'refused' });
  expect(replaced.cache!.subarray(0, 20).equals(bundleDigest())).toBe(true);

  // This bundle's digest, and data V8 cannot use: the server starts all the same, and the cache is made again.
  // (with the SHA-256 of that data, so that it reaches V8).
  const garbage = randomBytes(4096);
  fs.writeFileSync(cacheFile(), Buffer.concat([bundleDigest(), createHash('sha256').update(garbage).digest(), garbage]), {
    mode: 0o600,
  });
  const remade = await startOnce();
  expect(listeningLine(remade.output)).toMatchObject({ codeCache: 'rejected' });
  expect(remade.cache!.length).toBeGreaterThan(100_000);
  expect(remade.cache!.subarray(0, 20).equals(bundleDigest())).toBe(true);

  // Damaged data under an intact header (V8 would not notice: release builds do not checksum cached data): not used,
  // made again.
  const damaged = Buffer.from(remade.cache!);
  damaged[damaged.length - 1000] ^= 0x01;
  fs.writeFileSync(cacheFile(), damaged, { mode: 0o600 });
  const repaired = await startOnce();
  expect(listeningLine(repaired.output)).toMatchObject({ codeCache: 'refused' });
  expect(repaired.cache!.equals(damaged)).toBe(false);
  expect(createHash('sha256').update(repaired.cache!.subarray(52)).digest().equals(repaired.cache!.subarray(20, 52))).toBe(true);
}, 240_000);

test('a cache others may write is not used, and is replaced by one only the owner may write', async () => {
  const { cache } = await startOnce();
  fs.writeFileSync(cacheFile(), cache!);
  fs.chmodSync(cacheFile(), 0o666);
  const writtenAt = fs.statSync(cacheFile()).mtimeMs;
  await new Promise((r) => setTimeout(r, 20));
  const replaced = await startOnce();
  expect(listeningLine(replaced.output)).toMatchObject({ codeCache: 'refused' });
  expect(fs.statSync(cacheFile()).mode & 0o777).toBe(0o600);
  expect(fs.statSync(cacheFile()).mtimeMs).not.toBe(writtenAt);
}, 120_000);

test('under --enable-source-maps the bundle loads as a plain module (Node maps its stack traces): no cache is written', async () => {
  const run = await startOnce({ NODE_OPTIONS: '--enable-source-maps' });
  expect(run.cache).toBeUndefined();
  expect(listeningLine(run.output)).not.toHaveProperty('codeCache');
}, 120_000);
