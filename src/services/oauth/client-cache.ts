import type { Db } from '../../db';
import { listenForNotifications, type Listener } from '../../db/notifications';
import { clientWriteInFlight, clientWritesOfThisProcess } from '../../db/repositories/client-writes';
import { findClientById, type OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import type { Logger } from '../../lib/logger';
import { setNewest } from '../../lib/bounded-map';

/** The NOTIFY channel of client changes (migration 20261203160000: a trigger on oauth_clients and api_resources). */
export const CLIENTS_CHANNEL = 'sso_clients';
/** At most this many clients are kept; the least recently used goes first. */
export const CLIENT_CACHE_SIZE = 1000;
/**
 * The longest a kept client is used without reading it again. Only matters if the listening connection died without
 * a sign (no error, no end): every change is otherwise heard within milliseconds of its commit.
 */
export const CLIENT_CACHE_MAX_AGE_MS = 5000;

/**
 * The clients this instance authenticated, kept in memory so that a token request makes no round trip to read its
 * client (issue 33: client_credentials and the refresh grant). Kept only while this instance LISTENs on
 * `sso_clients`: a change to any client or API resource, on any instance, is notified at its commit and empties the
 * cache here, so a rotated secret, a deactivated or deleted client, or a changed scope apply to the next request on
 * every instance (docs/performance.md, "The client cache"). While the listening connection is down (and until it is
 * back, which empties the cache again) every lookup reads the database, as without a cache.
 */
export class ClientCache {
  private readonly entries = new Map<string, { row: OAuthClientRow; readAtMs: number }>();
  /** Moves at every notification and (re)connect: a read that started before a move is not kept. */
  private generation = 0;
  private localWrites = clientWritesOfThisProcess();
  private listener: Listener | undefined;

  constructor(private readonly deps: { db: Db; logger: Logger; nowMs?: () => number }) {}

  /** Whether lookups are served from memory now (the notification connection is listening). */
  get active(): boolean {
    return this.listener?.listening === true;
  }

  /** How many clients are kept (metrics and tests). */
  get size(): number {
    return this.entries.size;
  }

  /** The client with this id as stored now (see the class comment), or undefined. */
  async find(clientId: string): Promise<OAuthClientRow | undefined> {
    const writes = clientWritesOfThisProcess();
    if (writes !== this.localWrites) {
      this.localWrites = writes;
      this.forget();
    }
    if (!this.active) return findClientById(this.deps.db, clientId);
    const now = this.now();
    const kept = this.entries.get(clientId);
    if (kept && now - kept.readAtMs < CLIENT_CACHE_MAX_AGE_MS) {
      // Least recently used first: a hit moves to the end.
      this.entries.delete(clientId);
      this.entries.set(clientId, kept);
      return kept.row;
    }
    const generation = this.generation;
    const row = await findClientById(this.deps.db, clientId);
    // Kept only if nothing changed while it was read (a notification, a write here, a reconnect) and no write of this
    // process is uncommitted: the row read may be the old one, and the write's commit could come before the read's
    // answer is handled.
    if (row && this.active && generation === this.generation && writes === clientWritesOfThisProcess() && !clientWriteInFlight()) {
      setNewest(this.entries, clientId, { row, readAtMs: now }, CLIENT_CACHE_SIZE);
    }
    return row;
  }

  /** Empties the cache (a change was notified, or the notifications may have been missed). */
  forget(): void {
    this.generation++;
    this.entries.clear();
  }

  /** Starts listening on a connection of its own; until it listens, and whenever it is lost, nothing is kept. */
  startSync(options: { connectionString: string }): void {
    if (this.listener) return;
    this.listener = listenForNotifications({
      connectionString: options.connectionString,
      channel: CLIENTS_CHANNEL,
      logger: this.deps.logger,
      onNotification: () => this.forget(),
      // Whatever changed while the connection was down.
      onConnected: () => this.forget(),
    });
  }

  async stopSync(): Promise<void> {
    const listener = this.listener;
    this.listener = undefined;
    this.forget();
    await listener?.stop();
  }

  private now(): number {
    return this.deps.nowMs ? this.deps.nowMs() : Date.now();
  }
}
