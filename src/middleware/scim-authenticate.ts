import type { RequestHandler } from 'express';
import type { ServiceContext } from '../services/context';
import { authenticateConnection } from '../services/scim/scim-connections.service';
import { bearerTokenOf } from './authenticate';

/**
 * `auth: 'scim'` (CONTRACT §20): the request carries the Bearer token of a SCIM connection; the connection becomes
 * the caller (`req.scimConnection`), the actor of every audit event the request records. 401 otherwise.
 */
export function scimAuthenticate(ctx: ServiceContext): RequestHandler {
  return async (req, _res, next) => {
    req.scimConnection = await authenticateConnection(ctx, bearerTokenOf(req));
    next();
  };
}
