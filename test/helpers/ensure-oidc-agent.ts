import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Debian's oidc-agent command-line tools (package oidc-agent-cli): the agent, oidc-gen and oidc-token. */
export const OIDC_AGENT_BIN = { agent: '/usr/bin/oidc-agent', gen: '/usr/bin/oidc-gen', token: '/usr/bin/oidc-token' } as const;

function installed(): boolean {
  return Object.values(OIDC_AGENT_BIN).every((bin) => fs.existsSync(bin));
}

/**
 * The oidc-agent interop test runs Debian's oidc-agent-cli. On a fresh Debian machine where we are root, install it once
 * so that `npm test` alone passes (as ensure-authlib does for Authlib); anywhere else the test fails with instructions
 * rather than being skipped.
 */
export function ensureOidcAgent(): void {
  if (installed()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !fs.existsSync('/usr/bin/apt-get')) {
    process.stderr.write(
      '\noidc-agent is missing: the oidc-agent interop test will fail. Install it with: sudo apt-get install -y oidc-agent-cli\n',
    );
    return;
  }
  process.stderr.write('\nInstalling Debian oidc-agent-cli for the oidc-agent interop test (first run only)...\n');
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'oidc-agent-cli'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  } catch (err) {
    process.stderr.write(`Could not install oidc-agent-cli: ${(err as Error).message}\n`);
  }
}
