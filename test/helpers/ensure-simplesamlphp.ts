import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export const SIMPLESAMLPHP_WWW = '/usr/share/simplesamlphp/www';
export const PHP = '/usr/bin/php';

const ready = () => fs.existsSync(`${SIMPLESAMLPHP_WWW}/module.php`) && fs.existsSync(PHP);

/**
 * The second SAML interop test (test/e2e/saml-simplesamlphp.test.ts) runs Debian's simplesamlphp under PHP's built-in
 * web server (no Apache) as the service provider. On a fresh Debian machine where we are root, install it once (about
 * 30 seconds, without recommends: the package's Apache configuration is not used); anywhere else the test fails with
 * the instructions printed here rather than being skipped.
 */
export function ensureSimpleSamlPhp(): void {
  if (ready()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !fs.existsSync('/usr/bin/apt-get')) {
    process.stderr.write(
      '\nSimpleSAMLphp is missing: the SAML interop test will fail. Install it with: ' +
        'sudo apt-get install -y --no-install-recommends simplesamlphp php-cli php-xml\n',
    );
    return;
  }
  process.stderr.write('\nInstalling Debian simplesamlphp and php-cli for the SAML interop test (first run only)...\n');
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'simplesamlphp', 'php-cli', 'php-xml'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    process.stderr.write(`Could not install simplesamlphp: ${(err as Error).message}\n`);
  }
}
