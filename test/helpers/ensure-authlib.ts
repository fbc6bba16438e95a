import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Debian's Python, where python3-authlib installs (a pyenv or venv python on PATH would not see it). */
export const DEBIAN_PYTHON = '/usr/bin/python3';

function authlibImports(): boolean {
  try {
    execFileSync(DEBIAN_PYTHON, ['-c', 'import authlib, requests'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The Authlib interop test runs a Python relying party on Debian's python3-authlib. On a fresh Debian machine where we
 * are root, install it once so that `npm test` alone passes (as ensure-chromium does for the browser); anywhere else
 * the test fails with instructions rather than being skipped.
 */
export function ensureAuthlib(): void {
  if (fs.existsSync(DEBIAN_PYTHON) && authlibImports()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !fs.existsSync('/usr/bin/apt-get')) {
    process.stderr.write(
      '\nPython Authlib is missing: the Authlib interop test will fail. Install it with: sudo apt-get install -y python3-authlib python3-requests\n',
    );
    return;
  }
  process.stderr.write('\nInstalling Debian python3-authlib for the Authlib interop test (first run only)...\n');
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'python3-authlib', 'python3-requests'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    process.stderr.write(`Could not install python3-authlib: ${(err as Error).message}\n`);
  }
}
