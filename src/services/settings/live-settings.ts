import type { Brand } from '../../config';
import type { Db } from '../../db';
import { listenForNotifications, type Listener } from '../../db/notifications';
import { loadStoredSettings, storedSettingsVersion, type StoredSettings } from '../../db/repositories/settings.repo';
import type { Logger } from '../../lib/logger';
import {
  defaultSettings,
  firstIssue,
  SETTINGS,
  type SettingName,
  type SettingSource,
  type SettingValues,
} from '../../declarations/settings';

/** The settings in force on this instance: built once per change, read by every request without a query. */
export interface SettingsSnapshot {
  /** settings_version of what was loaded (0 before anything was stored). */
  readonly version: number;
  readonly values: Readonly<SettingValues>;
  readonly sources: Readonly<Record<SettingName, SettingSource>>;
  /** CONTRACT §15, derived from brand_name, brand_logo_url and brand_color. */
  readonly brand: Readonly<Brand>;
  /** The global allowed_origins as a set (CORS, the cookie origin check). */
  readonly allowedOrigins: ReadonlySet<string>;
}

/** The NOTIFY channel of settings changes (repositories/settings.repo.ts notifies it in the change's transaction). */
export const SETTINGS_CHANNEL = 'sso_settings';
/** The fallback: how often each instance compares the stored version with its own (CONTRACT §18: live within 2 s). */
export const SETTINGS_POLL_MS = 500;

/**
 * CONTRACT §18: the one accessor of the runtime settings. `current` is an in-memory snapshot (environment over stored
 * over default), replaced as a whole when the stored settings change: on this instance right after a change commits,
 * on the others through LISTEN/NOTIFY within milliseconds, or at the next periodic version check (twice a second) when
 * the notification connection is down. A failed reload keeps the snapshot in force (no request fails because of it).
 */
export class LiveSettings {
  private snapshot: SettingsSnapshot;
  private inflight: Promise<void> | undefined;
  private again = false;
  private listener: Listener | undefined;
  private poll: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(snapshot: SettingsSnapshot) => void>();

  constructor(private readonly deps: { db: Db; logger: Logger; pinned: Partial<SettingValues> }) {
    this.snapshot = this.build({ version: 0, values: {} });
  }

  /** The settings in force now (cheap: a field read). */
  get current(): SettingsSnapshot {
    return this.snapshot;
  }

  /** The settings the environment pins (read-only in the API and the console). */
  get pinned(): Readonly<Partial<SettingValues>> {
    return this.deps.pinned;
  }

  /** Called with the new snapshot after each change (e.g. the mailer reopening its transport). */
  onChange(listener: (snapshot: SettingsSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Loads what is stored and replaces the snapshot. Concurrent calls share one load, and a call made while a load runs
   * gets a second load after it, so what committed before the call is always seen when it resolves.
   */
  refresh(): Promise<void> {
    if (this.inflight) {
      this.again = true;
      return this.inflight;
    }
    this.inflight = (async () => {
      try {
        do {
          this.again = false;
          this.apply(await loadStoredSettings(this.deps.db));
        } while (this.again);
      } finally {
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }

  /** Starts following changes made by other instances: LISTEN on a dedicated connection, plus the version check. */
  startSync(options: { connectionString: string; pollMs?: number }): void {
    if (this.listener) return;
    const { logger } = this.deps;
    const reload = (why: string) =>
      this.refresh().catch((err: Error) =>
        logger.warn({ err: { message: err.message }, why }, 'settings reload failed: keeping the current ones'),
      );
    this.listener = listenForNotifications({
      connectionString: options.connectionString,
      channel: SETTINGS_CHANNEL,
      logger,
      onNotification: () => void reload('notification'),
      // Whatever changed while the connection was down.
      onConnected: () => void reload('listening'),
    });
    const check = async () => {
      try {
        const version = await storedSettingsVersion(this.deps.db);
        if (version !== this.snapshot.version) await reload('version check');
      } catch (err) {
        logger.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'settings version check failed');
      }
    };
    let checking = false;
    this.poll = setInterval(() => {
      if (checking) return;
      checking = true;
      void check().finally(() => (checking = false));
    }, options.pollMs ?? SETTINGS_POLL_MS);
    this.poll.unref();
  }

  /** Whether this instance is LISTENing for changes now (false before startSync and while reconnecting). */
  get listening(): boolean {
    return this.listener?.listening ?? false;
  }

  async stopSync(): Promise<void> {
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
    const listener = this.listener;
    this.listener = undefined;
    await listener?.stop();
    await this.inflight?.catch(() => undefined);
  }

  private apply(stored: StoredSettings): void {
    // The same or an older version (a slower load overtaken by a newer one): nothing to replace.
    if (stored.version <= this.snapshot.version) return;
    this.snapshot = this.build(stored);
    for (const listener of this.listeners) {
      try {
        listener(this.snapshot);
      } catch (err) {
        this.deps.logger.error({ err: { message: err instanceof Error ? err.message : String(err) } }, 'settings change listener failed');
      }
    }
  }

  private build(stored: StoredSettings): SettingsSnapshot {
    const values: Record<string, unknown> = defaultSettings();
    const sources: Record<string, SettingSource> = {};
    const pinned: Record<string, unknown> = this.deps.pinned;
    for (const declaration of SETTINGS) {
      const { name } = declaration;
      sources[name] = 'default';
      if (name in pinned) {
        values[name] = pinned[name];
        sources[name] = 'environment';
        continue;
      }
      if (!(name in stored.values)) continue;
      const parsed = declaration.schema.safeParse(stored.values[name]);
      if (parsed.success) {
        values[name] = parsed.data;
        sources[name] = 'stored';
      } else {
        // A value stored under older rules: the default applies until an administrator stores a valid one.
        this.deps.logger.warn({ setting: name, problem: firstIssue(parsed.error) }, 'stored setting is invalid: using its default');
      }
    }
    const v = values as SettingValues;
    return Object.freeze({
      version: stored.version,
      values: Object.freeze(v),
      sources: Object.freeze(sources as Record<SettingName, SettingSource>),
      brand: Object.freeze({ name: v.brand_name, logoUrl: v.brand_logo_url ?? undefined, color: v.brand_color }),
      allowedOrigins: new Set(v.allowed_origins),
    });
  }
}

/**
 * A value computed from the settings in force, recomputed only when they change (a discovery document, the favicon,
 * the security headers): the hot path compares one reference.
 */
export function derived<T>(settings: LiveSettings, compute: (snapshot: SettingsSnapshot) => T): () => T {
  let from: SettingsSnapshot | undefined;
  let value: T;
  return () => {
    const snapshot = settings.current;
    if (snapshot !== from) {
      value = compute(snapshot);
      from = snapshot;
    }
    return value;
  };
}
