/**
 * The functions of xml-encryption 6 this server (encrypt) and its tests (decrypt) call: the package ships no types, and
 * @types/xml-encryption describes version 1.
 */
declare module 'xml-encryption' {
  export interface EncryptOptions {
    rsa_pub: string | Buffer;
    pem: string | Buffer;
    encryptionAlgorithm: string;
    keyEncryptionAlgorithm: string;
    keyEncryptionDigest?: 'sha1' | 'sha256' | 'sha512';
    disallowEncryptionWithInsecureAlgorithm?: boolean;
    warnInsecureAlgorithm?: boolean;
  }
  export function decrypt(xml: string, options: { key: string | Buffer }, callback: (err: Error | null, result?: string) => void): void;
  export function encrypt(content: string, options: EncryptOptions, callback: (err: Error | null, result?: string) => void): void;
}
