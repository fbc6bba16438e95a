import { spawnSync } from 'node:child_process';
import path from 'node:path';

/**
 * src/lib/postgres-driver.ts: pg's load-time probe for Cloudflare Workers constructs a `Response`, which loads Node's
 * whole fetch implementation (its bundled undici) into every server. Loaded through loadPostgresDriver, pg works and
 * Node's fetch stays unloaded until something really uses it; `Response` is Node's own again afterwards.
 */
const ROOT = path.resolve(__dirname, '../..');

function inFreshNode(how: 'plain' | 'driver'): { fetchLoaded: boolean; responseWorks: boolean; pgWorks: boolean } {
  const script = `
    require('tsx/cjs/api').register();
    const loaded = () => process.moduleLoadList.some((m) => m.includes('internal/deps/undici'));
    if (loaded()) throw new Error('fetch was loaded before pg');
    if (process.argv[1] === 'plain') require('pg');
    else require('./src/lib/postgres-driver.ts').loadPostgresDriver(require);
    const fetchLoaded = loaded();
    const pg = require('pg');
    const pgWorks = typeof pg.Pool === 'function' && typeof new pg.Client().connect === 'function';
    const responseWorks = new Response('ok', { status: 201 }).status === 201;
    process.stdout.write(JSON.stringify({ fetchLoaded, responseWorks, pgWorks }));
  `;
  const r = spawnSync(process.execPath, ['-e', script, how], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
  });
  if (r.status !== 0) throw new Error(`node failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { fetchLoaded: boolean; responseWorks: boolean; pgWorks: boolean };
}

test("a plain require('pg') loads Node's fetch implementation (what the driver's loader avoids)", () => {
  expect(inFreshNode('plain')).toEqual({ fetchLoaded: true, responseWorks: true, pgWorks: true });
});

test("loadPostgresDriver loads pg without Node's fetch implementation, and leaves Response as Node defines it", () => {
  expect(inFreshNode('driver')).toEqual({ fetchLoaded: false, responseWorks: true, pgWorks: true });
});
