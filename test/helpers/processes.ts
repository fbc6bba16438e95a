import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The repository root: server and CLI processes run from here, as `npm start` and `npm run admin` do. */
export const ROOT = path.resolve(__dirname, '../..');

export interface RunningServer {
  proc: ChildProcess;
  base: string;
  output: () => string;
  /** SIGTERM and wait for the exit code. */
  stop: () => Promise<number | null>;
}

/**
 * `npm start` as a real process (tsx), on `port`; resolves once /health answers 200. The wait is generous: on a
 * loaded 2-core CI machine compiling through tsx and a first start of the embedded PostgreSQL (initdb) can take a
 * minute; it bounds a hang, it is not a speed check.
 */
export async function startServerProcess(
  env: NodeJS.ProcessEnv,
  port: number,
  timeoutMs = 150_000,
  options: { build?: boolean; root?: string } = {},
): Promise<RunningServer> {
  // `build`: the production build (dist/src/server.js, the entry in front of the one-file bundle of scripts/bundle.js),
  // as production and the Dockerfile run it; call buildOnce() first. `root`: a copy of the repository elsewhere to run from.
  const root = options.root ?? ROOT;
  const args = options.build ? [path.join(root, 'dist/src/server.js')] : ['--import', 'tsx', 'src/server.ts'];
  const proc = spawn(process.execPath, args, {
    cwd: root,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  const running: RunningServer = {
    proc,
    base,
    output: () => out,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const code = await exited;
      // A stop that is not clean: the server's own log says why (it names the step that failed or hung).
      if (code !== 0 && code !== null) process.stderr.write(`[server exited ${code} after SIGTERM] its log ends:\n${out.slice(-6000)}\n`);
      return code;
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`server exited early (${proc.exitCode}): ${out}`);
    try {
      if ((await fetch(`${base}/health`)).status === 200) return running;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  proc.kill('SIGKILL');
  throw new Error(`server did not become healthy: ${out}`);
}

/** Runs a CLI script (src/cli/<name>.ts) to its end: exit code, stdout, stderr. */
export async function runCli(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', `src/cli/${script}.ts`, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d) => (stdout += d));
  proc.stderr!.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  return { code, stdout, stderr };
}

/**
 * `npm run build` when a source is newer than dist/ (scripts/start.js --build-only, the step `npm start` takes):
 * a fresh clone builds once; a CI run that already built reuses it.
 */
export async function buildOnce(): Promise<void> {
  const proc = spawn(process.execPath, [path.join(ROOT, 'scripts/start.js'), '--build-only'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  if (code !== 0) throw new Error(`build failed (${code}): ${out}`);
}

/**
 * Live PostgreSQL processes of DATA_DIR's embedded cluster (their command line names `-D DATA_DIR/pgdata`, or the
 * cluster's recorded place; Linux).
 */
export function postgresOf(dataDir: string, pgdata = path.join(dataDir, 'pgdata')): number[] {
  const parentOf = (pid: string): string | undefined => /^PPid:\s*(\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  const running = fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(pgdata);
      } catch {
        return false;
      }
    });
  // A backend the postmaster has just forked carries its command line until it renames itself: the postmasters are
  // the processes whose parent is not one of them.
  return running
    .filter((pid) => {
      try {
        const parent = parentOf(pid);
        return parent === undefined || !running.includes(parent);
      } catch {
        return false;
      }
    })
    .map(Number);
}
