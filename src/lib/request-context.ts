import { AsyncLocalStorage } from 'node:async_hooks';
import type { Request, RequestHandler } from 'express';

/**
 * The request being served, available to code that runs on its behalf (services emitting security events) without
 * threading it through every signature. Mounted after the body parsers: their stream callbacks would lose it.
 */
const storage = new AsyncLocalStorage<Request>();

export const requestContext: RequestHandler = (req, _res, next) => {
  storage.run(req, next);
};

/** The request being served, undefined outside one. */
export function currentRequest(): Request | undefined {
  return storage.getStore();
}

/** Runs `fn` as part of `req` (for code reached outside the stored context, such as a body parser's error). */
export function runInRequest<T>(req: Request, fn: () => T): T {
  return storage.getStore() === req ? fn() : storage.run(req, fn);
}
