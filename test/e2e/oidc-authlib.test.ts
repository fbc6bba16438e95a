import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEBIAN_PYTHON } from '../helpers/ensure-authlib';
import { makeClient, makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * Interop: Python Authlib (Debian's python3-authlib), unchanged, as the relying party of the whole flow against the
 * real listening server with the default configuration: the spec's discovery document (both paths) -> authorize
 * (PKCE S256, nonce) -> hosted login -> consent -> callback -> token -> id_token validated by Authlib's CodeIDToken
 * (signature via jwks_uri, iss, aud, nonce, at_hash) -> userinfo -> refresh (a new id_token, validated again) ->
 * RP-initiated logout -> refresh refused.
 */
const run = promisify(execFile);

let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp());
});
afterAll(async () => {
  await stop();
});

test.each(['/api/oauth/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server'])(
  'Authlib relying party configured from %s: the whole OpenID Connect flow',
  async (discoveryPath) => {
    const user = await makeUser(t, { firstName: 'Guido', lastName: 'Python' });
    const rp = await makeClient(t, {
      redirectUris: ['http://localhost:8766/auth'],
      postLogoutRedirectUris: ['http://localhost:8766/bye'],
    });
    const { stdout } = await run(DEBIAN_PYTHON, [path.join(__dirname, '../interop/authlib_rp.py')], {
      env: {
        PATH: process.env.PATH,
        BASE_URL: baseUrl,
        CLIENT_ID: rp.clientId,
        CLIENT_SECRET: rp.clientSecret,
        REDIRECT_URI: 'http://localhost:8766/auth',
        POST_LOGOUT_REDIRECT_URI: 'http://localhost:8766/bye',
        USER_EMAIL: user.email,
        USER_PASSWORD: user.password,
        DISCOVERY_PATH: discoveryPath,
      },
      timeout: 60_000,
    });
    const result = JSON.parse(stdout);
    expect(result.issuer).toBe(baseUrl);
    expect(result.callback_iss).toBe(baseUrl);
    expect(result.claims).toMatchObject({
      iss: baseUrl,
      sub: user.id,
      aud: rp.clientId,
      email: user.email,
      email_verified: true,
      name: 'Guido Python',
      amr: ['pwd'],
    });
    expect(typeof result.claims.nonce).toBe('string');
    expect(result.userinfo).toMatchObject({ sub: user.id, email: user.email });
    expect(result.refreshed_claims).toMatchObject({ sub: user.id, aud: rp.clientId, auth_time: result.claims.auth_time });
    expect(result.logout_status).toBe(302);
    expect(result.logout_location).toBe('http://localhost:8766/bye?state=authlib-bye');
    expect(result.refresh_after_logout).toBe('invalid_grant');
  },
);
