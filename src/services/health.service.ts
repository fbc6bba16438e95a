import { pingDatabase, type Db } from '../db';

/** A probe result is reused for at most this long: a storm of /health requests costs one query per second. */
export const HEALTH_MAX_AGE_MS = 1000;
/**
 * A probe that has not answered by then counts as down. Together with the maximum age, a database that goes away
 * turns /health into 503 within HEALTH_MAX_AGE_MS + HEALTH_TIMEOUT_MS < 2 s.
 */
export const HEALTH_TIMEOUT_MS = 900;
/**
 * From this age on, a request still gets the current result but starts the next probe in the background, so that
 * under steady traffic no request waits for a probe.
 */
export const HEALTH_REFRESH_AFTER_MS = 500;

export interface HealthProbe {
  /** True when the database answered `select 1` in a probe started at most HEALTH_MAX_AGE_MS ago. */
  check(): Promise<boolean>;
  /**
   * The same answer without waiting when a result young enough exists (starting the next probe in the background past
   * HEALTH_REFRESH_AFTER_MS, as `check` does); undefined when the caller must wait for a probe (`check`).
   */
  fresh(): boolean | undefined;
}

/**
 * The database probe behind GET /health, shared by concurrent requests: at most one probe in flight, and its result
 * answers every request for HEALTH_MAX_AGE_MS counted from the moment the probe started (so no answer describes the
 * database as it was more than that long ago). Past HEALTH_REFRESH_AFTER_MS the next probe starts in the background;
 * a request waits for a probe only when the last result is too old (after a quiet second, or a probe that hangs).
 */
export function createHealthProbe(db: Db, now: () => number = () => performance.now()): HealthProbe {
  let last: { ok: boolean; startedAt: number } | undefined;
  let inFlight: Promise<boolean> | undefined;

  const probe = async (): Promise<boolean> => {
    const startedAt = now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
    });
    const ping = pingDatabase(db).then(
      () => true,
      () => false,
    );
    const ok = await Promise.race([ping, timeout]);
    clearTimeout(timer);
    last = { ok, startedAt };
    return ok;
  };

  const next = (): Promise<boolean> =>
    (inFlight ??= probe().finally(() => {
      inFlight = undefined;
    }));

  const fresh = (): boolean | undefined => {
    if (!last) return undefined;
    const age = now() - last.startedAt;
    if (age >= HEALTH_MAX_AGE_MS) return undefined;
    if (age >= HEALTH_REFRESH_AFTER_MS) void next();
    return last.ok;
  };

  return {
    check() {
      const ok = fresh();
      return ok === undefined ? next() : Promise.resolve(ok);
    },
    fresh,
  };
}
