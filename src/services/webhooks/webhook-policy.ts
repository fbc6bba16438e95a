import net from 'node:net';
import os from 'node:os';
import ipaddr from 'ipaddr.js';
import type { Config } from '../../config';
import type { LiveSettings } from '../settings/live-settings';
import type { OutboundPolicy } from '../../lib/outbound-http';
import { DELIVERABLE_EVENT_TYPES } from '../../declarations/event-types';

/**
 * The rules of CONTRACT §17 as pure functions (table tests in test/unit/webhook-policy.test.ts): which event
 * patterns a subscription may name, which URLs it may point at, when an attempt is retried.
 */

/** CONTRACT §17: retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then failed (seven attempts in all). */
export const RETRY_DELAYS_SECONDS: readonly number[] = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600];

/** CONTRACT §17: a 2xx within 10 s is delivered. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Bytes of a receiver's answer read (the rest is not needed: the status decides, an excerpt is kept). */
export const RESPONSE_MAX_BYTES = 64 * 1024;
/** Characters of the answer kept for the deliveries list. */
export const RESPONSE_EXCERPT_CHARS = 200;
/** After a rotation the previous secret keeps signing (a second signature) this long, so receivers can switch. */
export const PREVIOUS_SECRET_GRACE_SECONDS = 24 * 3600;

export { DELIVERABLE_EVENT_TYPES } from '../../declarations/event-types';

/**
 * A valid pattern is `*`, an exact deliverable type, or `prefix.*` where some deliverable type starts with
 * `prefix.` (a typo such as `usr.*` would otherwise subscribe to nothing, silently).
 */
export function isValidEventPattern(pattern: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) {
    const prefix = pattern.slice(0, -1);
    return prefix.length > 1 && DELIVERABLE_EVENT_TYPES.some((t) => t.startsWith(prefix));
  }
  return DELIVERABLE_EVENT_TYPES.includes(pattern);
}

/**
 * Whether `type` matches one of `patterns`. The fan-out trigger of the create_webhooks migration applies the same
 * rule in SQL (it runs in the audit insert's transaction); this one serves the tests and documentation.
 */
export function eventMatches(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));
}

/** Seconds until the next attempt after `attemptsMade` failed attempts, or null when the delivery has failed. */
export function retryDelaySeconds(attemptsMade: number, schedule: readonly number[] = RETRY_DELAYS_SECONDS): number | null {
  if (attemptsMade < 1) return 0;
  return schedule[attemptsMade - 1] ?? null;
}

/** A 2xx is delivered; any other status, a timeout or a refused or failed connection is retried. */
export function isDelivered(responseStatus: number | null): boolean {
  return responseStatus !== null && responseStatus >= 200 && responseStatus < 300;
}

/** `localhost`, or an IP literal in a loopback range (classified by ipaddr.js). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (!net.isIP(h)) return false;
  // ipaddr.process: an IPv4-mapped IPv6 address as the IPv4 address it maps.
  return ipaddr.process(h).range() === 'loopback';
}

export interface WebhookAddressRules {
  isProduction: boolean;
  webhookAllowPrivate: boolean;
  /** This server's listening port (CONTRACT §23: its own addresses are refused on it). */
  port?: number;
}

/** The rules in force now: webhook_allow_private is a runtime setting (CONTRACT §18); each delivery reads it anew. */
export function webhookAddressRules(ctx: { config: Readonly<Config>; settings: LiveSettings }): WebhookAddressRules {
  return {
    isProduction: ctx.config.isProduction,
    webhookAllowPrivate: ctx.settings.current.values.webhook_allow_private,
    port: ctx.config.port,
  };
}

function normalHost(host: string): string {
  return host
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** An IP literal in one spelling (IPv4-mapped IPv6 as IPv4), or undefined for a name. */
function normalAddress(address: string): string | undefined {
  const h = normalHost(address);
  if (!ipaddr.isValid(h)) return undefined;
  return ipaddr.process(h).toNormalizedString();
}

function portOfUrl(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'http:' ? 80 : 443;
}

/**
 * CONTRACT §23 "Webhooks never target this server", by name: true when `url` names one of this server's own
 * origins (BASE_URL's, OIDC_ISSUER's). A public name is refused whatever the port (the same host is this server or
 * its reverse proxy); a loopback one (development) only on the same port, since other local services listen on
 * other ports of the same name. ALLOWED_ORIGINS are other applications' origins, not this server's: not refused.
 */
export function pointsAtThisServer(config: Pick<Config, 'baseUrl' | 'oidcIssuer'>, url: string): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  const targetHost = normalAddress(target.hostname) ?? normalHost(target.hostname);
  return [config.baseUrl, config.oidcIssuer].some((own) => {
    let origin: URL;
    try {
      origin = new URL(own);
    } catch {
      return false;
    }
    if (isLoopbackHost(origin.hostname)) return isLoopbackHost(target.hostname) && portOfUrl(origin) === portOfUrl(target);
    return (normalAddress(origin.hostname) ?? normalHost(origin.hostname)) === targetHost;
  });
}

/** The addresses of this machine's interfaces (os.networkInterfaces), in normal spelling. */
function interfaceAddresses(): Set<string> {
  const addresses = new Set<string>();
  for (const list of Object.values(os.networkInterfaces())) {
    for (const entry of list ?? []) {
      const normal = normalAddress(entry.address.replace(/%.*$/, ''));
      if (normal) addresses.add(normal);
    }
  }
  return addresses;
}

/**
 * CONTRACT §23, by address: the server listens on `port` of every interface (server.ts), so an address of this
 * machine (loopback, unspecified, or any interface's) on that port is this server, whatever name led to it.
 */
export function isListeningAddress(
  listeningPort: number,
  address: string,
  port: number,
  local: ReadonlySet<string> = interfaceAddresses(),
): boolean {
  if (port !== listeningPort) return false;
  const normal = normalAddress(address);
  if (!normal) return false;
  const range = ipaddr.parse(normal).range();
  return range === 'loopback' || range === 'unspecified' || [...local].some((a) => normalAddress(a) === normal);
}

/**
 * CONTRACT §17, the outbound policy of one webhook URL: https; plain http only to a loopback host outside
 * production; private, loopback and link-local addresses refused in production unless webhook_allow_private.
 */
export function webhookOutboundPolicy(rules: WebhookAddressRules, url: string, overrides: Partial<OutboundPolicy> = {}): OutboundPolicy {
  const listeningPort = rules.port;
  let loopback = false;
  try {
    loopback = isLoopbackHost(new URL(url).hostname);
  } catch {
    // not a URL: checkOutboundUrl refuses it
  }
  return {
    allowPrivate: !rules.isProduction || rules.webhookAllowPrivate,
    allowHttp: !rules.isProduction && loopback,
    // CONTRACT §23: never this server's own listening addresses, WEBHOOK_ALLOW_PRIVATE or not.
    ...(listeningPort !== undefined
      ? { refuseAddress: (address: string, port: number) => isListeningAddress(listeningPort, address, port) }
      : {}),
    timeoutMs: DELIVERY_TIMEOUT_MS,
    maxBytes: RESPONSE_MAX_BYTES,
    ...overrides,
  };
}
