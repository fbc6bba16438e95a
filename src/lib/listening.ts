import { channel } from 'node:diagnostics_channel';

/**
 * Published once when the server listens (server.ts): the production entry (boot.ts) writes its code cache then, so
 * that the cache holds every function a start compiled.
 */
export const LISTENING_CHANNEL = 'service-sso:listening';

export function announceListening(): void {
  channel(LISTENING_CHANNEL).publish(undefined);
}
