import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { DEBIAN_PYTHON } from './ensure-authlib';

function pysaml2Ready(): boolean {
  try {
    execFileSync(DEBIAN_PYTHON, ['-c', 'import saml2.client'], { stdio: 'ignore' });
    return fs.existsSync('/usr/bin/xmlsec1');
  } catch {
    return false;
  }
}

/**
 * The SAML interop test (test/e2e/saml-pysaml2.test.ts) runs Debian's python3-pysaml2 with xmlsec1 as the service
 * provider. On a fresh Debian machine where we are root, install them once (about 20 seconds); anywhere else the test
 * fails with the instructions printed here rather than being skipped.
 */
export function ensurePysaml2(): void {
  if (fs.existsSync(DEBIAN_PYTHON) && pysaml2Ready()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !fs.existsSync('/usr/bin/apt-get')) {
    process.stderr.write(
      '\npysaml2 is missing: the SAML interop test will fail. Install it with: sudo apt-get install -y python3-pysaml2 xmlsec1\n',
    );
    return;
  }
  process.stderr.write('\nInstalling Debian python3-pysaml2 and xmlsec1 for the SAML interop test (first run only)...\n');
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'python3-pysaml2', 'xmlsec1'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    process.stderr.write(`Could not install python3-pysaml2: ${(err as Error).message}\n`);
  }
}
