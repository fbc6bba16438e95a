import pg from 'pg';
import type { Logger } from '../lib/logger';

export interface Listener {
  /** True while the LISTEN is in place (between a connect and the connection's loss). */
  readonly listening: boolean;
  stop(): Promise<void>;
}

/**
 * A dedicated connection that LISTENs on `channel` (outside the pool: a pooled connection is handed to other queries
 * and would lose its LISTEN). When the connection fails or ends it is opened again after a pause that doubles up to
 * 10 s; `onConnected` runs after each (re)connect, so the caller can catch up on what it missed while disconnected.
 */
export function listenForNotifications(options: {
  connectionString: string;
  channel: string;
  logger: Logger;
  onNotification: (payload: string | undefined) => void;
  onConnected?: () => void;
}): Listener {
  const { connectionString, channel, logger, onNotification, onConnected } = options;
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`listenForNotifications: bad channel name ${channel}`);
  let client: pg.Client | undefined;
  let stopped = false;
  let retryMs = 250;
  let timer: NodeJS.Timeout | undefined;
  let listening = false;

  const schedule = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, retryMs);
    timer.unref();
    retryMs = Math.min(retryMs * 2, 10_000);
  };

  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ connectionString, connectionTimeoutMillis: 5000, keepAlive: true });
    client = c;
    let failed = false;
    const lost = (err?: Error) => {
      if (failed) return;
      failed = true;
      listening = false;
      c.removeAllListeners('notification');
      c.end().catch(() => undefined);
      if (client === c) client = undefined;
      if (!stopped) {
        logger.warn({ channel, err: err ? { message: err.message } : undefined }, 'notification connection lost: reconnecting');
        schedule();
      }
    };
    c.on('error', lost);
    c.on('end', () => lost());
    c.on('notification', (message) => {
      if (message.channel === channel) onNotification(message.payload);
    });
    try {
      await c.connect();
      await c.query(`listen ${channel}`);
      if (stopped) {
        await c.end().catch(() => undefined);
        return;
      }
      retryMs = 250;
      listening = true;
      onConnected?.();
    } catch (err) {
      lost(err instanceof Error ? err : new Error(String(err)));
    }
  };

  void connect();
  return {
    get listening() {
      return listening;
    },
    async stop() {
      stopped = true;
      listening = false;
      if (timer) clearTimeout(timer);
      const c = client;
      client = undefined;
      if (c) {
        c.removeAllListeners();
        c.on('error', () => undefined);
        await c.end().catch(() => undefined);
      }
    },
  };
}
