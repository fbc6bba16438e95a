import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A real https server on 127.0.0.1 for Client ID Metadata Documents (CONTRACT §13 requires an https client_id): a
 * certificate for `localhost`, `docs.cimd.internal` (a name only test resolvers know) and 127.0.0.1, made by openssl
 * once per process and self-signed, so the fetcher must be
 * given it as its CA (OutboundPolicy.ca) and `localhost` must be in CIMD_ALLOWED_HOSTS, exactly as an operator with an
 * internal document host would do.
 */
let made: { key: string; cert: string } | undefined;

export function selfSignedLocalhost(): { key: string; cert: string } {
  if (made) return made;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-cimd-tls-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,DNS:docs.cimd.internal,IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  made = { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8') };
  fs.rmSync(dir, { recursive: true, force: true });
  return made;
}

export interface HttpsHost {
  /** https://localhost:<port> */
  origin: string;
  /** The certificate to trust (PEM). */
  ca: string;
  /** Requests seen, by path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export async function startHttpsHost(handler: Handler): Promise<HttpsHost> {
  const { key, cert } = selfSignedLocalhost();
  const hits = new Map<string, number>();
  const server = https.createServer({ key, cert }, (req, res) => {
    const p = new URL(req.url ?? '/', 'https://localhost').pathname;
    hits.set(p, (hits.get(p) ?? 0) + 1);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://localhost:${port}`,
    ca: cert,
    hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Serves JSON documents by path from a mutable map, with the Cache-Control each asks for. */
export function documentHandler(documents: Map<string, { body: unknown; cacheControl?: string; status?: number }>): Handler {
  return (req, res) => {
    const p = new URL(req.url ?? '/', 'https://localhost').pathname;
    const doc = documents.get(p);
    if (!doc) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('not found');
    }
    res.writeHead(doc.status ?? 200, {
      'content-type': 'application/json',
      ...(doc.cacheControl ? { 'cache-control': doc.cacheControl } : {}),
    });
    res.end(typeof doc.body === 'string' ? doc.body : JSON.stringify(doc.body));
  };
}
