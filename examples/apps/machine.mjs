// Machine-to-machine: a backend service gets an RFC 9068 access token for another API with client_credentials
// (openid-client). The client is confidential, lists the client_credentials grant and is allowed the API. It proves
// itself with its secret, or, registered for private_key_jwt, with an assertion signed by its private key (a WebCrypto
// CryptoKey, or { key, kid }) whose public half is in the client's jwks or jwks_uri.
//
//   CLIENT_ID=... CLIENT_SECRET=... node machine.mjs https://sso.example.com https://invoices.example.com/
import * as client from 'openid-client';

export async function serviceToken({ issuer, clientId, clientSecret, privateKey, resource, scope, insecure = false }) {
  const options = insecure ? { execute: [client.allowInsecureRequests] } : undefined;
  const clientAuth = privateKey ? client.PrivateKeyJwt(privateKey) : undefined;
  const config = await client.discovery(new URL(issuer), clientId, clientSecret, clientAuth, options);
  // Reuse the token until shortly before `expires_in`: asking for one per request wastes both sides' time.
  return client.clientCredentialsGrant(config, { ...(resource ? { resource } : {}), ...(scope ? { scope } : {}) });
}

// Run as a program (not when imported): no top-level await, so the module also loads through require().
if (import.meta.url === `file://${process.argv[1]}`) {
  (async () => {
    const [issuer, resource] = process.argv.slice(2);
    const tokens = await serviceToken({
      issuer,
      resource,
      clientId: process.env.CLIENT_ID,
      clientSecret: process.env.CLIENT_SECRET,
      insecure: issuer.startsWith('http:'),
    });
    console.log(JSON.stringify({ access_token: tokens.access_token, expires_in: tokens.expires_in, scope: tokens.scope }, null, 2));
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
