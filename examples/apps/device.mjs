// A device without a keyboard (a TV, a CLI over SSH) signs in with the device authorization grant (RFC 8628) and
// openid-client: it shows a code and an address, the person approves on /device from a phone or computer, and
// the device receives its tokens. The client is usually public and lists urn:ietf:params:oauth:grant-type:device_code.
//
//   node device.mjs https://sso.example.com <client_id>
import * as client from 'openid-client';

export async function deviceLogin({ issuer, clientId, clientSecret, scope = 'openid profile', resource, showCode, insecure = false }) {
  const options = insecure ? { execute: [client.allowInsecureRequests] } : undefined;
  const auth = clientSecret ? client.ClientSecretBasic(clientSecret) : client.None();
  const config = await client.discovery(new URL(issuer), clientId, undefined, auth, options);
  const started = await client.initiateDeviceAuthorization(config, { scope, ...(resource ? { resource } : {}) });
  await showCode(started);
  // Polls at `interval`, slows down when told to (slow_down), stops on access_denied and expired_token.
  return client.pollDeviceAuthorizationGrant(config, started);
}

// Run as a program (not when imported): no top-level await, so the module also loads through require().
if (import.meta.url === `file://${process.argv[1]}`) {
  (async () => {
    const [issuer, clientId] = process.argv.slice(2);
    const tokens = await deviceLogin({
      issuer,
      clientId,
      insecure: issuer.startsWith('http:'),
      showCode: ({ user_code, verification_uri, verification_uri_complete }) =>
        console.log(`On your phone or computer, open ${verification_uri} and enter ${user_code}\n(or open ${verification_uri_complete})`),
    });
    console.log(`Signed in as ${tokens.claims()?.sub}`);
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
