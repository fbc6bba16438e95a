import type { Said } from '../errors';
import { say, type ValidationKey } from '../i18n';
import type { OutboundRefused } from '../lib/outbound-http';

/**
 * A saved URL refused by the outbound rules (a webhook's receiver, a back-channel logout URI), in the words of the
 * API (English `message`) and of the catalogue (`said`, for the console): a wrong scheme names the field's own rule
 * (`https` in production, else `https` or loopback http), a refused address in production names the switch that
 * allows private receivers.
 */
export function outboundWords(
  isProduction: boolean,
  err: OutboundRefused,
  scheme: readonly [https: ValidationKey, httpsOrLoopback: ValidationKey],
): { message: string; said?: Said } {
  if (err.reason === 'scheme') return say(isProduction ? scheme[0] : scheme[1]);
  const host = err.said?.params?.host;
  if (err.reason === 'refused_address' && isProduction && host !== undefined) return say('outboundAddressPrivate', { host });
  return err.said ? { message: err.message, said: err.said } : { message: err.message };
}
