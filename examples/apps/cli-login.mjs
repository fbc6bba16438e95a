// A command-line tool (or desktop app) signing in with openid-client as a PUBLIC client, RFC 8252 style: it listens
// on a loopback port the system picks, opens the browser at the authorization URL, and receives the code on
// http://127.0.0.1:<port>/callback. Register `http://127.0.0.1/callback` once: any port matches.
//
//   node cli-login.mjs https://sso.example.com <client_id> [resource]
import http from 'node:http';
import * as client from 'openid-client';

export async function loginWithLoopback({ issuer, clientId, scope = 'openid profile email', resource, openBrowser, insecure = false }) {
  const options = insecure ? { execute: [client.allowInsecureRequests] } : undefined;
  const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), options);
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const redirectUri = `http://127.0.0.1:${server.address().port}/callback`;
  try {
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope,
      state,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      ...(resource ? { resource } : {}),
    });
    const callback = new Promise((resolve) => {
      server.on('request', (req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('Signed in: you can close this window and return to the terminal.');
        resolve(new URL(req.url, redirectUri));
      });
    });
    await openBrowser(url);
    const tokens = await client.authorizationCodeGrant(
      config,
      await callback,
      { pkceCodeVerifier: codeVerifier, expectedState: state },
      resource ? { resource } : undefined,
    );
    return { tokens, config, redirectUri };
  } finally {
    server.closeAllConnections?.();
    server.close();
  }
}

// Run as a program (not when imported): no top-level await, so the module also loads through require().
if (import.meta.url === `file://${process.argv[1]}`) {
  (async () => {
    const [issuer, clientId, resource] = process.argv.slice(2);
    const { tokens } = await loginWithLoopback({
      issuer,
      clientId,
      resource,
      insecure: issuer.startsWith('http:'),
      openBrowser: async (url) => console.log(`Open this address in your browser:\n\n  ${url}\n`),
    });
    console.log(JSON.stringify({ access_token: tokens.access_token, expires_in: tokens.expires_in, scope: tokens.scope }, null, 2));
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
