import type { RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import type { Config } from '../config';
import { AppError } from '../errors';
import type { Logger } from '../lib/logger';

/**
 * Per-IP limit on /api/* (spec §8), answering 429 rate_limited with Retry-After. Without a store the counters are
 * in memory (one instance); with the Redis store every instance shares them. A store error lets the request
 * through rather than taking the service down.
 */
export function createRateLimit(
  config: Pick<Config, 'rateLimitWindowMs' | 'rateLimitMax'>,
  store?: Store,
): RequestHandler {
  return rateLimit({
    windowMs: config.rateLimitWindowMs,
    limit: config.rateLimitMax,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    passOnStoreError: true,
    store,
    handler: (req, _res, next, options) => {
      const resetTime = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const retryAfter = resetTime
        ? Math.max(1, Math.ceil((resetTime.getTime() - Date.now()) / 1000))
        : Math.ceil(options.windowMs / 1000);
      next(new AppError('rate_limited', 'Too many requests, slow down', { headers: { 'Retry-After': String(retryAfter) } }));
    },
  });
}

/** A Redis-backed store for REDIS_URL, and how to close its connection. */
export async function createRedisRateLimitStore(
  redisUrl: string,
  logger: Logger,
  prefix = 'sso:rl:',
): Promise<{ store: Store; close: () => Promise<void> }> {
  // Loaded only when REDIS_URL is set: the Redis client is a large module tree a single instance never needs.
  const { createClient } = require('redis') as typeof import('redis');
  const { RedisStore } = require('rate-limit-redis') as typeof import('rate-limit-redis');
  const client = createClient({ url: redisUrl });
  client.on('error', (err: Error) => logger.warn({ err: { message: err.message } }, 'redis error'));
  await client.connect();
  const store = new RedisStore({ prefix, sendCommand: (...args: string[]) => client.sendCommand(args) });
  return {
    store,
    close: async () => {
      await client.quit().catch(() => undefined);
    },
  };
}
