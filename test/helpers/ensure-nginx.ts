import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export const NGINX_PATH = '/usr/sbin/nginx';

/**
 * The two-instance test runs deploy/nginx.conf with Debian's nginx. On a fresh Debian machine where we are root,
 * install it once so that `npm test` alone passes (as ensure-chromium does for the browser); anywhere else the test
 * fails with instructions rather than being skipped. The package's own service is never started.
 */
export function ensureNginx(): void {
  if (fs.existsSync(NGINX_PATH)) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !fs.existsSync('/usr/bin/apt-get')) {
    process.stderr.write(
      `\nnginx is missing at ${NGINX_PATH}: the two-instance test will fail. Install it with: sudo apt-get install -y nginx\n`,
    );
    return;
  }
  process.stderr.write('\nInstalling Debian nginx for the two-instance test (first run only)...\n');
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'nginx'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    process.stderr.write(`Could not install nginx: ${(err as Error).message}\n`);
  }
}
