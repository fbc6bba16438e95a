import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * The browser test drives Debian's Chromium (a test tool's own browser download cannot reach its host here). On a
 * fresh Debian machine where we are root, install it once so that `npm test` alone passes; anywhere else the
 * browser test fails with instructions rather than being skipped.
 */
export function ensureChromium(): void {
  if (fs.existsSync(CHROMIUM_PATH)) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !fs.existsSync('/usr/bin/apt-get')) {
    process.stderr.write(
      `\nChromium is missing at ${CHROMIUM_PATH}: the browser test will fail. Install it with: sudo apt-get install -y chromium\n`,
    );
    return;
  }
  process.stderr.write('\nInstalling Debian chromium for the browser test (first run only)...\n');
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    process.stderr.write(`Could not install chromium: ${(err as Error).message}\n`);
  }
}

/**
 * Debian's Chromium, headless, for the browser tests; a missing browser fails loudly, never skips. `extraArgs` adds
 * switches (e.g. `--host-resolver-rules=MAP localhost 127.0.0.1` for WebAuthn on http://localhost).
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) to run the browser tests`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
      ...extraArgs,
    ],
  });
}
