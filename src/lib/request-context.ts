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

export interface RequestOrigin {
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
  /** The authenticated caller, once `authenticate` has run: a user id, or a SCIM connection's id. */
  userId: string | null;
  /** `scim_connection` when the caller is a SCIM connection (CONTRACT §20), null for a user. */
  actorType: string | null;
  /** The SCIM connection's name; null for a user. */
  actorName: string | null;
  clientId: string | null;
}

/** Who is asking, for the request in whose async context this runs; undefined outside a request (CLI, timers). */
export function currentRequestOrigin(): RequestOrigin | undefined {
  const req = storage.getStore();
  if (!req) return undefined;
  return {
    requestId: typeof req.id === 'string' ? req.id : req.id !== undefined ? String(req.id) : null,
    ip: req.ip ?? null,
    userAgent: req.get('user-agent') ?? null,
    userId: req.principal?.userId ?? req.scimConnection?.id ?? null,
    actorType: req.scimConnection ? 'scim_connection' : null,
    actorName: req.scimConnection?.name ?? null,
    clientId: req.principal?.clientId ?? null,
  };
}
