import dns from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';
import ipaddr from 'ipaddr.js';
import type { Dispatcher } from 'undici';
import { thrownCode, thrownField } from './thrown';

/**
 * The one way the server makes HTTP requests to addresses that users supply (client metadata documents,
 * webhook receivers, upstream identity providers). It exists because such a URL is an SSRF vector: a name can
 * resolve to 127.0.0.1, 169.254.169.254 (cloud metadata) or an internal service, and a second lookup at connect
 * time can answer differently from the first (DNS rebinding).
 *
 * So every request here:
 * - resolves the host itself and classifies every address with ipaddr.js (no hand-written IP parsing); anything
 *   but a public unicast address is refused unless the policy allows private targets or lists the host;
 * - connects to the address it vetted (the connector's `lookup` is the vetting step, so there is no second
 *   resolution to race);
 * - follows no redirects (a 3xx is returned to the caller as it is), gives up after `timeoutMs`, and reads at
 *   most `maxBytes` of the body.
 */
export interface OutboundPolicy {
  /** Allow private, loopback, link-local and other non-public addresses (tests, WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Host names (lower case) exempt from the address check, e.g. CIMD_ALLOWED_HOSTS. */
  allowedHosts?: ReadonlySet<string>;
  /** Whether plain http is acceptable; callers decide (e.g. loopback only outside production). Default false. */
  allowHttp?: boolean;
  timeoutMs: number;
  maxBytes: number;
  /** Resolver override for tests (same shape as dns.promises.lookup with all: true). */
  resolve?: (host: string) => Promise<Array<{ address: string; family: number }>>;
  /**
   * Extra trusted certificate authorities (PEM) for https, on top of Node's bundle: a test's self-signed server, or a
   * host in an allow-list that serves a certificate of an internal CA. Never a way to skip verification.
   */
  ca?: string;
  /**
   * Addresses never connected to, whatever `allowPrivate` and `allowedHosts` say: true refuses `address` on `port`
   * (the webhooks' rule: this server's own listening addresses, CONTRACT §23).
   */
  refuseAddress?: (address: string, port: number) => boolean;
}

/**
 * Why a request was refused. `refused_address` is one answer for a name that does not resolve, one that resolves to
 * a private address and one that resolves to an address refused by the policy: telling them apart would let whoever
 * supplies the URL probe which internal names exist (the `internal` text says which, for logs only).
 */
export type OutboundRefusalReason = 'bad_url' | 'scheme' | 'refused_address' | 'timeout' | 'too_large' | 'network';

/**
 * The words of a refusal: a key of the catalogues' `validation` section (src/i18n, which lib/ may not import) and its
 * values; `message` is that key's English sentence (test/unit/outbound-http.test.ts holds the two together).
 */
export interface OutboundWords {
  key:
    | 'outboundNotAbsolute'
    | 'outboundScheme'
    | 'outboundCredentials'
    | 'outboundAddress'
    | 'outboundTimeout'
    | 'outboundNetwork'
    | 'outboundTooLarge'
    | 'outboundBody';
  params?: Readonly<Record<string, string>>;
}

const words = (key: OutboundWords['key'], params?: Record<string, string>): OutboundWords => (params ? { key, params } : { key });

export class OutboundRefused extends Error {
  override name = 'OutboundRefused';
  constructor(
    readonly reason: OutboundRefusalReason,
    message: string,
    /** What exactly happened, for the server's log; never shown to the one who supplied the URL. */
    readonly internal: string = message,
    /** The catalogue key of `message`, for the HTML faces. */
    readonly said?: OutboundWords,
  ) {
    super(message);
  }
}

/** The one message of a `refused_address` refusal (see OutboundRefusalReason). */
export function refusedAddressMessage(host: string): string {
  return `${host} does not resolve to an address this server may call`;
}

/** A `refused_address` refusal of `host`; `internal` says which of the cases it was (logs only). */
const refusedAddress = (host: string, internal: string) =>
  new OutboundRefused('refused_address', refusedAddressMessage(host), internal, words('outboundAddress', { host }));

/** The port a URL connects to (its explicit port, or its scheme's default). */
export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'http:' ? 80 : 443;
}

export interface OutboundResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

/** ipaddr.js range names that are ordinary internet addresses; everything else is refused. */
const PUBLIC_RANGES = new Set(['unicast']);

/**
 * True when `address` (an IP literal) is a public unicast address; IPv4-mapped IPv6 is judged as IPv4. The deprecated
 * IPv4-compatible block ::/96 (RFC 4291 §2.5.5.1, `::127.0.0.1`), which ipaddr.js calls `unicast`, is never public.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed instanceof ipaddr.IPv6) {
    if (parsed.parts.slice(0, 6).every((part) => part === 0)) return false;
    if (parsed.isIPv4MappedAddress()) return PUBLIC_RANGES.has(parsed.toIPv4Address().range());
  }
  return PUBLIC_RANGES.has(parsed.range());
}

const defaultResolve = (host: string) => dns.promises.lookup(host, { all: true, verbatim: true });

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/** Checks scheme and (for IP literals) the address before any connection is made. */
export function checkOutboundUrl(raw: string | URL, policy: OutboundPolicy): URL {
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    throw new OutboundRefused('bad_url', 'not an absolute URL', undefined, words('outboundNotAbsolute'));
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    const scheme = url.protocol.replace(':', '');
    throw new OutboundRefused('scheme', `${scheme} URLs are not allowed here`, undefined, words('outboundScheme', { scheme }));
  }
  if (url.username || url.password) {
    throw new OutboundRefused('bad_url', 'URLs with credentials are not allowed', undefined, words('outboundCredentials'));
  }
  const host = hostOf(url);
  if (net.isIP(host) && !policy.allowPrivate && !policy.allowedHosts?.has(host) && !isPublicAddress(host)) {
    throw refusedAddress(host, `${host} is not a public address`);
  }
  if (net.isIP(host) && policy.refuseAddress?.(host, portOf(url))) {
    throw refusedAddress(host, `${host}:${portOf(url)} is refused by the policy`);
  }
  return url;
}

/**
 * The addresses of `host` that may be connected to under `policy`, or the refusal. Any private answer refuses the
 * whole name: a name that mixes public and private answers is a rebinding setup, not an accident.
 */
async function vetHost(host: string, policy: OutboundPolicy, port: number): Promise<Array<{ address: string; family: number }>> {
  const resolve = policy.resolve ?? defaultResolve;
  const exempt = policy.allowPrivate || policy.allowedHosts?.has(host) === true;
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await resolve(host);
  } catch (err) {
    const code = thrownCode(err) ?? 'error';
    throw refusedAddress(host, `${host} does not resolve (${code})`);
  }
  if (!addresses.length) throw refusedAddress(host, `${host} does not resolve`);
  const usable = exempt ? addresses : addresses.filter((a) => isPublicAddress(a.address));
  if (usable.length !== addresses.length || !usable.length) {
    throw refusedAddress(host, `${host} resolves to a non-public address`);
  }
  const { refuseAddress } = policy;
  if (refuseAddress && usable.some((a) => refuseAddress(a.address, port))) {
    throw refusedAddress(host, `${host} resolves to an address refused by the policy`);
  }
  return usable;
}

/**
 * The checks of a request without the request: scheme, credentials, and every address the host resolves to now.
 * For validating a stored address when it is saved (a webhook URL); the request itself vets again at connect time.
 */
export async function checkOutboundTarget(raw: string | URL, policy: OutboundPolicy): Promise<URL> {
  const url = checkOutboundUrl(raw, policy);
  await vetHost(hostOf(url), policy, portOf(url));
  return url;
}

/**
 * undici, loaded on the first outbound request (outside the server's bundle, scripts/bundle.js), not at start: about
 * 6 MB of heap and a fifth of a second of a start that most processes spend before they call anyone.
 */
const undici = (): typeof import('undici') => require('undici');

/** A connection pool whose new connections to `port` are vetted under `policy` (one per port: the lookup cannot see it). */
function createVettingAgent(policy: OutboundPolicy, port: number): Dispatcher {
  return new (undici().Agent)({
    connect: {
      timeout: policy.timeoutMs,
      ...(policy.ca ? { ca: [...tls.rootCertificates, policy.ca] } : {}),
      // The connector resolves through this function and connects to what it returns: vetting here means the
      // address connected to is the address checked.
      lookup(hostname, options, callback) {
        const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
        vetHost(host, policy, port).then(
          (usable) => {
            // Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily), one otherwise.
            if (options.all) return callback(null, usable);
            callback(null, usable[0].address, usable[0].family);
          },
          (err: Error) => callback(err, '', 4),
        );
      },
    },
  });
}

function refusalFrom(err: unknown, timedOut: boolean): OutboundRefused {
  if (err instanceof OutboundRefused) return err;
  let cause: unknown = err;
  for (let i = 0; i < 5 && cause; i++) {
    if (cause instanceof OutboundRefused) return cause;
    cause = thrownField(cause, 'cause');
  }
  if (timedOut) return new OutboundRefused('timeout', 'the request timed out', undefined, words('outboundTimeout'));
  const code = thrownCode(thrownField(err, 'cause'));
  return new OutboundRefused(
    'network',
    `the request failed${code ? ` (${code})` : ''}`,
    undefined,
    words('outboundNetwork', { code: code ?? '' }),
  );
}

async function readCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number, controller: AbortController): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      controller.abort();
      await reader.cancel().catch(() => {});
      const bytes = String(maxBytes);
      throw new OutboundRefused('too_large', `the response is larger than ${bytes} bytes`, undefined, words('outboundTooLarge', { bytes }));
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/**
 * One request under `policy`. Resolves with the status, headers and (capped) body whatever the status, 3xx
 * included (never followed); rejects with OutboundRefused for a refused target, a timeout, an oversized body or a
 * network failure. Nothing of the request or response is logged here.
 */
export async function outboundRequest(url: string | URL, request: OutboundRequest, policy: OutboundPolicy): Promise<OutboundResponse> {
  const target = checkOutboundUrl(url, policy);
  const dispatcher = createVettingAgent(policy, portOf(target));
  try {
    return await send(target, request, policy, dispatcher);
  } finally {
    void dispatcher.close().catch(() => {});
  }
}

export interface OutboundClient {
  /** As outboundRequest; `policy` may differ per request in scheme, timeout and size cap only (see below). */
  request(url: string | URL, request: OutboundRequest, policy: OutboundPolicy): Promise<OutboundResponse>;
  close(): Promise<void>;
}

/**
 * outboundRequest with kept-alive connections, for a caller that calls the same receivers again and again (the
 * webhook workers): a new connection is vetted exactly as outboundRequest's (the lookup is the vetting step); a
 * reused one was vetted when it opened. The address rules (allowPrivate, allowedHosts, resolve) are the client's
 * `policy`; each request's own policy adds its scheme rule, timeout and size cap.
 */
export function createOutboundClient(policy: OutboundPolicy): OutboundClient {
  const dispatchers = new Map<number, Dispatcher>();
  return {
    request: async (url, request, perRequest) => {
      const { allowPrivate, allowedHosts, resolve, ca, refuseAddress } = policy;
      const merged = { ...perRequest, allowPrivate, allowedHosts, resolve, ca, refuseAddress };
      const target = checkOutboundUrl(url, merged);
      const port = portOf(target);
      let dispatcher = dispatchers.get(port);
      if (!dispatcher) {
        dispatcher = createVettingAgent(policy, port);
        dispatchers.set(port, dispatcher);
      }
      return send(target, request, merged, dispatcher);
    },
    close: async () => {
      await Promise.all([...dispatchers.values()].map((d) => d.close()));
    },
  };
}

async function send(
  url: string | URL,
  request: OutboundRequest,
  policy: OutboundPolicy,
  dispatcher: Dispatcher,
): Promise<OutboundResponse> {
  const target = checkOutboundUrl(url, policy);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, policy.timeoutMs);
  try {
    const response = await undici().fetch(target, {
      method: request.method ?? 'GET',
      headers: request.headers,
      body: request.body,
      redirect: 'manual',
      signal: controller.signal,
      dispatcher,
    });
    const body = await readCapped(response.body as ReadableStream<Uint8Array> | null, policy.maxBytes, controller);
    return { status: response.status, headers: response.headers as unknown as Headers, body };
  } catch (err) {
    throw refusalFrom(err, timedOut);
  } finally {
    clearTimeout(timer);
  }
}

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` with the same guarantees, for libraries that take a custom fetch (openid-client's `customFetch`).
 * The body is read (capped) before the Response is handed back.
 */
export function createOutboundFetch(policy: OutboundPolicy): (input: string | URL, init?: RequestInit) => Promise<Response> {
  return async (input, init = {}) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    let body: string | Buffer | undefined;
    if (typeof init.body === 'string') body = init.body;
    else if (init.body instanceof URLSearchParams) body = init.body.toString();
    else if (init.body instanceof Uint8Array) body = Buffer.from(init.body);
    else if (init.body != null) throw new OutboundRefused('bad_url', 'unsupported request body type', undefined, words('outboundBody'));
    const res = await outboundRequest(String(input), { method: init.method, headers, body }, policy);
    return new Response(NULL_BODY_STATUS.has(res.status) ? null : new Uint8Array(res.body), { status: res.status, headers: res.headers });
  };
}
