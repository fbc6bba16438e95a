import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest();

interface SoftCredential {
  id: Buffer;
  privateKey: KeyObject;
  publicKeyCose: Uint8Array;
  userHandle: string;
  rpId: string;
  counter: number;
}

/**
 * A software WebAuthn authenticator for API tests: ES256 keys from node:crypto, `none` attestation, authenticator
 * data and client data built as W3C WebAuthn §6.1 / §7 describe them, so @simplewebauthn/server verifies them like
 * a browser's. (The browser tests use Chromium's virtual authenticator instead.)
 */
export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  constructor(readonly origin: string) {}

  private authData(rpId: string, flags: number, counter: number, attested?: { id: Buffer; publicKeyCose: Uint8Array }): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    const parts: Buffer[] = [sha256(rpId), Buffer.from([flags]), count];
    if (attested) {
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(attested.id.length);
      parts.push(Buffer.alloc(16), idLength, attested.id, Buffer.from(attested.publicKeyCose));
    }
    return Buffer.concat(parts);
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create() for creation options (JSON), as toJSON() would send it. */
  create(options: { challenge: string; rp: { id?: string }; user: { id: string } }, overrides: { origin?: string } = {}) {
    const rpId = options.rp.id!;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const publicKeyCose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const credential: SoftCredential = { id: randomBytes(16), privateKey, publicKeyCose, userHandle: options.user.id, rpId, counter: 0 };
    this.credentials.push(credential);
    // UP | UV | AT
    const authData = this.authData(rpId, 0x01 | 0x04 | 0x40, 0, credential);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]) as Map<string, never>,
    );
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge, overrides.origin ?? this.origin)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }

  /**
   * navigator.credentials.get() for request options: the first credential allowed (or any of this authenticator's,
   * for discoverable sign-in). `counter` overrides the signature counter (a cloned authenticator).
   */
  get(
    options: { challenge: string; rpId?: string; allowCredentials?: Array<{ id: string }> },
    overrides: { credential?: SoftCredential; counter?: number; userVerified?: boolean; origin?: string } = {},
  ) {
    const allowed = options.allowCredentials?.map((c) => c.id) ?? [];
    const credential = overrides.credential ?? this.credentials.find((c) => allowed.length === 0 || allowed.includes(b64url(c.id)));
    if (!credential) throw new Error('no matching credential');
    credential.counter = overrides.counter ?? credential.counter + 1;
    const flags = 0x01 | (overrides.userVerified === false ? 0 : 0x04);
    const authData = this.authData(options.rpId ?? credential.rpId, flags, credential.counter);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, overrides.origin ?? this.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }
}
