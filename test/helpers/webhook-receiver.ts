import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, as a subscriber's endpoint sees it. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
  /** The parsed body as the standardwebhooks library returns it after verification (undefined when refused). */
  payload: { type: string; timestamp: string; data: Record<string, unknown> } | undefined;
  /** Whether the signature verified with the receiver's secret at the time (answered 401 otherwise). */
  verified: boolean;
  /** The status the receiver answered. */
  status: number;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** The secret each request is verified with (a real receiver's configuration). */
  secret: string | undefined;
  /** Status to answer a verified request with (default 204); called with the request number (1-based). */
  answer: (request: ReceivedWebhook, n: number) => number | Promise<number>;
  /** Resolves when `predicate` holds for the received list; rejects after `timeoutMs` (bounds a hang only). */
  waitFor(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<void>;
  /**
   * While down, every connection is closed as soon as it opens and the open ones are closed now: a sender sees a
   * network error, as from a receiver that went away, but the port stays bound, so no other process (another jest
   * worker) can take it before the receiver comes back on the same address.
   */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

/**
 * A real HTTP webhook receiver on 127.0.0.1 that verifies every request with the `standardwebhooks` library, as
 * a subscriber would (docs/webhooks.md "Verifying a delivery"). `setDown` takes it away and brings it back on the same
 * address.
 */
export async function startWebhookReceiver(options: { path?: string } = {}): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    received: [],
    secret: undefined,
    answer: () => 204,
    async waitFor(predicate, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > deadline) {
          const got = JSON.stringify(receiver.received.map((r) => [r.id, r.payload?.type, r.status]));
          throw new Error(`webhook receiver: condition not met; received ${got}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    setDown(isDown) {
      down = isDown;
      if (down) for (const socket of sockets) socket.destroy();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  let down = false;
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        const record: ReceivedWebhook = {
          id: headers['webhook-id'] ?? '',
          timestamp: headers['webhook-timestamp'] ?? '',
          signature: headers['webhook-signature'] ?? '',
          headers,
          body,
          payload: undefined,
          verified: false,
          status: 401,
        };
        try {
          if (!receiver.secret) throw new Error('no secret configured');
          record.payload = new Webhook(receiver.secret).verify(body, headers) as ReceivedWebhook['payload'];
          record.verified = true;
          record.status = await receiver.answer(record, receiver.received.length + 1);
        } catch {
          record.status = 401;
        }
        receiver.received.push(record);
        res.writeHead(record.status, { 'content-type': 'text/plain' });
        res.end(record.status >= 300 ? `receiver says ${record.status}` : 'ok');
      })();
    });
  });
  server.prependListener('connection', (socket: Socket) => {
    if (down) return socket.destroy();
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}${options.path ?? '/hooks'}`;
  return receiver;
}
