import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export const APACHE = '/usr/sbin/apache2';
export const APACHE_MODULES = '/usr/lib/apache2/modules';
export const MOD_AUTH_OPENIDC = `${APACHE_MODULES}/mod_auth_openidc.so`;

const ready = () => fs.existsSync(APACHE) && fs.existsSync(MOD_AUTH_OPENIDC);

/**
 * The back-channel logout interop test (test/e2e/backchannel-mod-auth-openidc.test.ts) runs Debian's Apache with
 * Debian's mod_auth_openidc as a foreground process with its own configuration in a temporary directory (the
 * package's own service and configuration are never used). On a fresh Debian machine where we are root, install
 * both once; anywhere else the test fails with the instructions printed here rather than being skipped.
 */
export function ensureApacheOpenidc(): void {
  if (ready()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !fs.existsSync('/usr/bin/apt-get')) {
    process.stderr.write(
      '\nApache with mod_auth_openidc is missing: the back-channel logout interop test will fail. Install it with: ' +
        'sudo apt-get install -y apache2 libapache2-mod-auth-openidc\n',
    );
    return;
  }
  process.stderr.write(
    '\nInstalling Debian apache2 and libapache2-mod-auth-openidc for the back-channel logout test (first run only)...\n',
  );
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'apache2', 'libapache2-mod-auth-openidc'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    process.stderr.write(`Could not install apache2 and mod_auth_openidc: ${(err as Error).message}\n`);
  }
}
