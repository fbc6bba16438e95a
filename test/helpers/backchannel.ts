import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JSONWebKeySet } from 'jose';
import { jose } from '../../src/lib/jose';

/** One logout token a relying party's back-channel endpoint received, verified as a relying party would. */
export interface ReceivedLogout {
  contentType: string;
  /** The raw `logout_token` form field. */
  token: string;
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  /** Verified against the issuer's JWKS, iss and typ (Back-Channel Logout 1.0 §2.6; tests compare aud themselves). */
  verified: boolean;
  status: number;
}

export interface LogoutReceiver {
  url: string;
  received: ReceivedLogout[];
  /** Status answered to a request (1-based count); 200 by default. */
  answer: (n: number) => number;
  waitFor(predicate: (received: ReceivedLogout[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A relying party's back-channel logout endpoint on 127.0.0.1: reads `logout_token` from the form body and verifies it
 * with the issuer's published JWKS, `iss` and `typ: logout+jwt`.
 */
export async function startLogoutReceiver(options: { issuer: string; jwks: () => Promise<JSONWebKeySet> }) {
  const receiver: LogoutReceiver = {
    url: '',
    received: [],
    answer: () => 200,
    async waitFor(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > deadline) throw new Error(`logout receiver: condition not met; received ${receiver.received.length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const token = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('logout_token') ?? '';
        let verified: boolean;
        let header: Record<string, unknown> = {};
        let claims: Record<string, unknown> = {};
        try {
          header = jose().decodeProtectedHeader(token) as Record<string, unknown>;
          claims = jose().decodeJwt(token) as Record<string, unknown>;
          const keys = jose().createLocalJWKSet(await options.jwks());
          await jose().jwtVerify(token, keys, { issuer: options.issuer, typ: 'logout+jwt' });
          verified = true;
        } catch {
          verified = false;
        }
        const status = verified ? receiver.answer(receiver.received.length + 1) : 400;
        receiver.received.push({ contentType: String(req.headers['content-type'] ?? ''), token, header, claims, verified, status });
        res.writeHead(status, { 'cache-control': 'no-store' }).end();
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/backchannel-logout`;
  return receiver;
}
