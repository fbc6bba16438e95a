import type { NextFunction, RequestHandler, Response } from 'express';
import { ipKeyGenerator, type Options, type Store } from 'express-rate-limit';
import { isIPv4 } from 'node:net';
import type { Config } from '../config';
import { AppError } from '../errors';
import type { Logger } from '../lib/logger';

/**
 * Per-IP limit on /api/* (spec §8), answering 429 rate_limited with Retry-After. Without a store the counters are
 * in memory (one instance); with the Redis store every instance shares them. A store error lets the request
 * through rather than taking the service down.
 *
 * The semantics and headers of express-rate-limit 8 (a fixed window per key from its first hit; IETF draft 7's
 * `RateLimit-Policy: <limit>;w=<window s>` and `RateLimit: limit=…, remaining=…, reset=<s>`), which this replaced on
 * the path every /api request takes (issue 33): the in-memory count is one map lookup and two headers, with no
 * promise per request (express-rate-limit awaits its key, its store and its limit in turn, and validates its
 * configuration on every request); only a store such as Redis's, which answers asynchronously, is awaited.
 */
export function createRateLimit(config: Pick<Config, 'rateLimitWindowMs' | 'rateLimitMax'>, store?: Store): RequestHandler {
  const windowMs = config.rateLimitWindowMs;
  const limit = config.rateLimitMax;
  const windowSeconds = Math.ceil(windowMs / 1000);
  const policy = `${limit};w=${windowSeconds}`;
  // express-rate-limit's Store contract: init with the limiter's options before the first increment.
  const ready = store?.init ? Promise.resolve(store.init({ windowMs, limit } as Options)).catch(() => undefined) : undefined;

  const answer = (res: Response, next: NextFunction, hits: number, resetAt: number | undefined): void => {
    const resetSeconds = resetAt === undefined ? windowSeconds : Math.max(0, Math.ceil((resetAt - Date.now()) / 1000));
    if (!res.headersSent) {
      res.setHeader('RateLimit-Policy', policy);
      res.setHeader('RateLimit', `limit=${limit}, remaining=${Math.max(limit - hits, 0)}, reset=${resetSeconds}`);
    }
    if (hits > limit) {
      next(new AppError('rate_limited', 'Too many requests, slow down', { headers: { 'Retry-After': String(Math.max(1, resetSeconds)) } }));
      return;
    }
    next();
  };

  if (!store) {
    const counters = new WindowCounters(windowMs);
    return (req, res, next) => {
      const counter = counters.increment(rateLimitKey(req.ip), Date.now());
      answer(res, next, counter.hits, counter.resetAt);
    };
  }
  return (req, res, next) => {
    const key = rateLimitKey(req.ip);
    (ready ?? Promise.resolve())
      .then(() => store.increment(key))
      .then(
        (result) => answer(res, next, result.totalHits, result.resetTime?.getTime()),
        // passOnStoreError: an unreachable Redis lets the request through (its client logs the error).
        () => next(),
      )
      .catch(next);
  };
}

/** A counter of one key: hits in the window that ends at resetAt (ms since the epoch). */
interface WindowCounter {
  hits: number;
  resetAt: number;
}

/**
 * The in-memory counters, as express-rate-limit's MemoryStore keeps them: a fixed window per key from its first hit,
 * and two maps so that keys without a hit for a whole window are dropped in bulk, without a walk over every key.
 */
export class WindowCounters {
  private previous = new Map<string, WindowCounter>();
  private current = new Map<string, WindowCounter>();

  constructor(private readonly windowMs: number) {
    const timer = setInterval(() => {
      this.previous = this.current;
      this.current = new Map();
    }, windowMs);
    timer.unref();
  }

  increment(key: string, now: number): WindowCounter {
    let counter = this.current.get(key);
    if (!counter) {
      counter = this.previous.get(key);
      if (counter) this.previous.delete(key);
      else counter = { hits: 0, resetAt: 0 };
      this.current.set(key, counter);
    }
    if (counter.resetAt <= now) {
      counter.hits = 0;
      counter.resetAt = now + this.windowMs;
    }
    counter.hits++;
    return counter;
  }
}

const MAPPED_IPV4 = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i;

/**
 * The limiter's key, as express-rate-limit's own ipKeyGenerator makes it (an IPv4 address; an IPv4-mapped IPv6
 * address as its IPv4; other IPv6 addresses by /56 network), with the two common cases answered without parsing
 * the address as IPv6: a dual-stack server sees every IPv4 client as `::ffff:a.b.c.d`.
 */
export function rateLimitKey(ip: string | undefined): string {
  if (!ip) return '';
  if (isIPv4(ip)) return ip;
  const mapped = MAPPED_IPV4.exec(ip)?.[1];
  if (mapped && isIPv4(mapped)) return mapped;
  return ipKeyGenerator(ip);
}

/** A Redis-backed store for REDIS_URL, and how to close its connection. */
export async function createRedisRateLimitStore(
  redisUrl: string,
  logger: Logger,
  prefix = 'sso:rl:',
): Promise<{ store: Store; storeWithPrefix: (prefix: string) => Store; close: () => Promise<void> }> {
  // Loaded only when REDIS_URL is set: the Redis client is a large module tree a single instance never needs.
  const { createClient } = require('redis') as typeof import('redis');
  const { RedisStore } = require('rate-limit-redis') as typeof import('rate-limit-redis');
  const client = createClient({ url: redisUrl });
  client.on('error', (err: Error) => logger.warn({ err: { message: err.message } }, 'redis error'));
  await client.connect();
  // One store per limiter (express-rate-limit refuses a store shared by two), all on the one connection.
  const storeWithPrefix = (p: string) => new RedisStore({ prefix: p, sendCommand: (...args: string[]) => client.sendCommand(args) });
  const store = storeWithPrefix(prefix);
  return {
    store,
    storeWithPrefix,
    close: async () => {
      await client.quit().catch(() => undefined);
    },
  };
}

/** CONTRACT §13: the per-IP budget of POST /api/oauth/register, counted apart from (and on top of) the /api limit. */
export function createRegistrationRateLimit(config: Pick<Config, 'clientRegistrationRateLimit'>, store?: Store): RequestHandler {
  const { windowMs, max } = config.clientRegistrationRateLimit;
  return createRateLimit({ rateLimitWindowMs: windowMs, rateLimitMax: max }, store);
}
