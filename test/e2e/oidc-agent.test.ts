import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { decodeJwt } from 'jose';
import { OIDC_AGENT_BIN } from '../helpers/ensure-oidc-agent';
import { makeClient, makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import { signInAndApprove } from '../helpers/oidc';
import type { TestApp } from '../helpers/test-app';

/**
 * Interop: oidc-agent (Debian's oidc-agent-cli), unchanged, with the default configuration, through OpenID discovery
 * (it reads {issuer}/.well-known/openid-configuration) and the scope it asks for, `openid profile email
 * offline_access`. Run without a terminal the way its manual describes:
 * - `oidc-agent --json` starts the agent in a throwaway config directory;
 * - `oidc-gen --flow=code --no-webserver --no-url-call --prompt=none --pw-cmd=...` prints the authorization URL and
 *   returns; the person's part (hosted login, consent) is played by the test's browser; then
 *   `oidc-gen --codeExchange=<callback URL>` completes the account (code exchange with PKCE, stored encrypted);
 * - `oidc-token` gets access tokens (the refresh grant with `--force-new`) and the id_token.
 */
const run = promisify(execFile);

const REDIRECT_URI = 'http://localhost:4242/';
const PASSWORD_CMD = 'echo oidc-agent-test-encryption-password';

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let home: string;
let agentPid: number | undefined;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'oidc-agent-test-'));
});
afterAll(async () => {
  if (agentPid) process.kill(agentPid);
  fs.rmSync(home, { recursive: true, force: true });
  await stop();
});

test('oidc-agent: oidc-gen (code flow, offline_access) then oidc-token for access, refreshed and id tokens', async () => {
  const user = await makeUser(t, { firstName: 'Agent', lastName: 'Smith' });
  const rp = await makeClient(t, { redirectUris: [REDIRECT_URI], scopes: ['openid', 'profile', 'email', 'offline_access'] });
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, TMPDIR: home, OIDC_CONFIG_DIR: path.join(home, 'config') };
  const tool = (bin: string, args: string[]) => run(bin, args, { env, timeout: 30_000 });

  const started = await tool(OIDC_AGENT_BIN.agent, ['--json', '--always-allow-idtoken', '--no-autoreauthenticate']);
  const agent = JSON.parse(started.stdout) as { socket: string; dpid: string };
  agentPid = Number(agent.dpid);
  env.OIDC_SOCK = agent.socket;

  const generate = await tool(OIDC_AGENT_BIN.gen, [
    'sso',
    `--iss=${baseUrl}`,
    `--client-id=${rp.clientId}`,
    `--client-secret=${rp.clientSecret}`,
    `--redirect-uri=${REDIRECT_URI}`,
    '--scope=openid profile email offline_access',
    '--flow=code',
    '--no-webserver',
    '--no-scheme',
    '--no-url-call',
    '--prompt=none',
    '--confirm-default',
    `--pw-cmd=${PASSWORD_CMD}`,
  ]);
  // oidc-gen prints its instructions and the URL on stderr.
  const printed = /(http\S+\/api\/oauth\/authorize\?\S+)/.exec(`${generate.stdout}\n${generate.stderr}`);
  if (!printed) throw new Error(`oidc-gen printed no authorization URL:\n${generate.stdout}\n${generate.stderr}`);
  const authorizationUrl = new URL(printed[1]!);
  expect(authorizationUrl.searchParams.get('scope')).toBe('openid profile email offline_access');

  const { callback } = await signInAndApprove(baseUrl, authorizationUrl, user);
  expect(callback.origin + callback.pathname).toBe(REDIRECT_URI.replace(/\/$/, '') + '/');
  expect(callback.searchParams.get('code')).toBeTruthy();
  expect(callback.searchParams.get('iss')).toBe(baseUrl);

  const exchanged = await tool(OIDC_AGENT_BIN.gen, [
    `--codeExchange=${callback.href}`,
    '--prompt=none',
    '--confirm-default',
    `--pw-cmd=${PASSWORD_CMD}`,
  ]);
  expect(`${exchanged.stdout}${exchanged.stderr}`).toMatch(/success/);

  const accessToken = (await tool(OIDC_AGENT_BIN.token, ['sso'])).stdout.trim();
  expect(decodeJwt(accessToken)).toMatchObject({ userId: user.id, client_id: rp.clientId, scope: 'openid profile email offline_access' });
  const userinfo = await fetch(`${baseUrl}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  expect(await userinfo.json()).toMatchObject({ sub: user.id, email: user.email, name: 'Agent Smith' });

  // --force-new: the agent uses its stored refresh token (refresh grant) for a new access token.
  const refreshed = (await tool(OIDC_AGENT_BIN.token, ['--force-new', 'sso'])).stdout.trim();
  expect(refreshed).not.toBe(accessToken);
  expect((await fetch(`${baseUrl}/api/oauth/userinfo`, { headers: { authorization: `Bearer ${refreshed}` } })).status).toBe(200);

  const idToken = (await tool(OIDC_AGENT_BIN.token, ['--id-token', 'sso'])).stdout.trim();
  expect(decodeJwt(idToken)).toMatchObject({ iss: baseUrl, sub: user.id, aud: rp.clientId, email: user.email });
});
