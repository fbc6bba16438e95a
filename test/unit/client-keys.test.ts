import { generateKeyPairSync } from 'node:crypto';
import { checkClientKeys, checkJwks, checkJwksUri } from '../../src/services/oauth/client-keys';
import { checkMetadataDocument } from '../../src/services/oauth/registration/metadata-document-policy';

/** Issue 34: the rules of private_key_jwt keys, as tables. */
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
const ecPrivate = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
const rsaSmall = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'jwk' });

test.each([
  ['EC P-256', { keys: [ec] }, true],
  ['Ed25519', { keys: [ed] }, true],
  ['RSA 2048', { keys: [{ ...rsa, alg: 'PS256', kid: 'r' }] }, true],
  ['RSA 1024', { keys: [rsaSmall] }, false],
  ['EC P-384', { keys: [p384] }, false],
  ['a private EC key', { keys: [ecPrivate] }, false],
  ['a symmetric key', { keys: [{ kty: 'oct', k: 'AAAA' }] }, false],
  ['use enc', { keys: [{ ...ec, use: 'enc' }] }, false],
  ['alg HS256', { keys: [{ ...ec, alg: 'HS256' }] }, false],
  ['an empty set', { keys: [] }, false],
  ['eleven keys', { keys: Array.from({ length: 11 }, () => ec) }, false],
  ['not an object', 'keys', false],
  ['garbage coordinates', { keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }] }, false],
])('checkJwks: %s → %s', (_label, value, ok) => {
  expect(checkJwks(value).ok).toBe(ok);
});

test.each([
  ['https://keys.example.com/jwks.json', false, true],
  ['http://keys.example.com/jwks.json', false, false],
  ['http://127.0.0.1:8080/jwks.json', false, true],
  ['http://127.0.0.1:8080/jwks.json', true, false],
  ['http://localhost/jwks', false, true],
  ['https://user:pw@keys.example.com/jwks', false, false],
  ['https://keys.example.com/jwks#frag', false, false],
  ['ftp://keys.example.com/jwks', false, false],
  ['jwks', false, false],
  [`https://keys.example.com/${'a'.repeat(2100)}`, false, false],
])('checkJwksUri %s (production %s) → %s', (uri, isProduction, ok) => {
  expect(checkJwksUri(uri, { isProduction }).ok).toBe(ok);
});

test('checkClientKeys: exactly one of jwks and jwks_uri', () => {
  const o = { isProduction: true };
  expect(checkClientKeys({ jwks: { keys: [ec] } }, o).ok).toBe(true);
  expect(checkClientKeys({ jwksUri: 'https://k.example.com/jwks' }, o).ok).toBe(true);
  expect(checkClientKeys({}, o).ok).toBe(false);
  expect(checkClientKeys({ jwks: { keys: [ec] }, jwksUri: 'https://k.example.com/jwks' }, o).ok).toBe(false);
});

describe('metadata documents declaring private_key_jwt', () => {
  const url = 'https://app.example.com/client.json';
  const base = { client_id: url, redirect_uris: ['https://app.example.com/cb'] };
  test.each([
    ['with an https jwks_uri', { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://app.example.com/jwks' }, true],
    ['without jwks_uri', { token_endpoint_auth_method: 'private_key_jwt' }, false],
    ['with inline jwks', { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [ec] } }, false],
    ['with an http jwks_uri', { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://app.example.com/jwks' }, false],
    ['jwks_uri on a public client', { token_endpoint_auth_method: 'none', jwks_uri: 'https://app.example.com/jwks' }, false],
    ['client_secret_basic', { token_endpoint_auth_method: 'client_secret_basic' }, false],
  ])('%s', (_label, extra, ok) => {
    const verdict = checkMetadataDocument(url, { ...base, ...extra });
    expect(verdict.ok).toBe(ok);
    if (verdict.ok && ok) expect(verdict.value.jwksUri).toBe('https://app.example.com/jwks');
  });
});
