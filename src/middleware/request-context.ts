import type { Request } from 'express';
import { forRequest, type ServedRequest, type ServiceContext } from '../services/context';
import type { RequestOrigin } from '../services/events';

/**
 * The service context of the request being served (issue 33), made on first use and kept on the request, so that the
 * steps before the route (authentication renewing a session from its cookie) and the route's handler record their
 * events with the same origin. Handed on explicitly: the route adapter gives it to the handler as `ctx`.
 */
export function contextOf(ctx: ServiceContext, req: Request): ServiceContext {
  return (req.serviceContext ??= forRequest(ctx, servedRequestOf(req)));
}

function servedRequestOf(req: Request): ServedRequest {
  return {
    origin: () => originOf(req),
    locale: () => req.pageEnv?.locale,
  };
}

/** Who is asking: the request id, IP and user agent, and the caller `authenticate` (or the SCIM scope) found. */
export function originOf(req: Request): RequestOrigin {
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
