import type { RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import { isIPv4 } from 'node:net';
import type { Config } from '../config';
import { AppError } from '../errors';
import type { Logger } from '../lib/logger';

/**
 * Per-IP limit on /api/* (spec §8), answering 429 rate_limited with Retry-After. Without a store the counters are
 * in memory (one instance); with the Redis store every instance shares them. A store error lets the request
 * through rather than taking the service down.
 */
export function createRateLimit(config: Pick<Config, 'rateLimitWindowMs' | 'rateLimitMax'>, store?: Store): RequestHandler {
  return rateLimit({
    windowMs: config.rateLimitWindowMs,
    limit: config.rateLimitMax,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    passOnStoreError: true,
    store,
    keyGenerator: (req) => rateLimitKey(req.ip),
    // That check reads the key generator's source for an ipKeyGenerator call; rateLimitKey makes it (and a unit
    // test proves it gives ipKeyGenerator's keys).
    validate: { keyGeneratorIpFallback: false },
    handler: (req, _res, next, options) => {
      const resetTime = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const retryAfter = resetTime ? Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000)) : Math.ceil(options.windowMs / 1000);
      next(new AppError('rate_limited', 'Too many requests, slow down', { headers: { 'Retry-After': String(retryAfter) } }));
    },
  });
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
