import { channel } from 'node:diagnostics_channel';

/**
 * Published once when the server listens (server.ts): the production entry (boot.ts) writes its code cache then, so
 * that the cache holds every function a start compiled, and says whether this start used one.
 */
export const LISTENING_CHANNEL = 'service-sso:listening';

/** What the subscribers of the channel say about the start, logged with the "listening" line. */
export interface Listening {
  /**
   * The production entry's V8 code cache: `used`; `none` (no cache file yet); `refused` (not used: another bundle's,
   * damaged, or not a file only the server's user may write); `rejected` (V8 refused it: another Node or other flags).
   * After any but `used`, one is written where dist/ is writable. Absent where the server does not run the bundle
   * with a cache (`npm run dev`, `--enable-source-maps`, Node before 20.12).
   */
  codeCache?: 'used' | 'none' | 'refused' | 'rejected';
}

export function announceListening(): Listening {
  const message: Listening = {};
  channel(LISTENING_CHANNEL).publish(message);
  return message;
}
