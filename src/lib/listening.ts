import { channel } from 'node:diagnostics_channel';

/**
 * Published once when the server listens (server.ts): the production entry (boot.ts) writes its code cache then, so
 * that the cache holds every function a start compiled, and says whether this start used one.
 */
export const LISTENING_CHANNEL = 'service-sso:listening';

/** What the subscribers of the channel say about the start, logged with the "listening" line. */
export interface Listening {
  /**
   * The production entry's V8 code cache: `used`; `none` (none usable: absent, another bundle's, damaged or not the
   * server user's own; one is written now where dist/ is writable); `rejected` (V8 refused it: another Node or other
   * flags; written again). Absent where the server does not run from the bundle (`npm run dev`, `--enable-source-maps`).
   */
  codeCache?: 'used' | 'none' | 'rejected';
}

export function announceListening(): Listening {
  const message: Listening = {};
  channel(LISTENING_CHANNEL).publish(message);
  return message;
}
