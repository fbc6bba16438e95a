/**
 * CORS for the endpoints a browser application calls itself (docs/apps.md, "Browser applications and CORS"): the
 * token, revocation, userinfo, device-authorization and pushed-authorization-request endpoints. A route declares
 * `cors: 'client'` and gets both steps of this file from `declareRouter`:
 *
 * - the answer to a request is CORS for the origins of the client the request names (`client_id` in the form body,
 *   the Basic authorization's client id, or the client of the Bearer token at userinfo) and for the global
 *   `allowed_origins` setting; never with credentials (no cookie is read or set by these endpoints);
 * - a preflight names no client: it is answered for any origin an active client lists, and the global ones.
 *
 * The client's origins are read from its row at each request (and `cors_origins` is kept in step by every write), so
 * registering or editing an application takes effect at once on every instance, without a restart. Who reads them is
 * not this file's business: it asks through `ClientOrigins`, a port the app fills (`clientOrigins` in
 * src/services/oauth/client-origins.ts), so http/ knows no service and no repository.
 */
import type { Request, RequestHandler, Response } from 'express';
import { jose } from '../lib/jose';
import { presentedTokenOf } from '../lib/presented-token';

/** What a browser may send with these calls (RFC 9449 DPoP included) and read from the answers. */
const ALLOW_HEADERS = 'Authorization, Content-Type, DPoP';
const EXPOSE_HEADERS = 'WWW-Authenticate, DPoP-Nonce';
const MAX_AGE_SECONDS = '600';

/** What the CORS steps ask about an origin (the port; src/app.ts passes the service's). */
export interface ClientOrigins {
  /** One of the global `allowed_origins` in force now (answered without a lookup). */
  isGlobal(origin: string): boolean;
  /** The active client `clientId` lists the origin. */
  listedBy(clientId: string, origin: string): Promise<boolean>;
  /** Some active client lists the origin (a preflight names no client). */
  listedByAny(origin: string): Promise<boolean>;
}

export interface ClientCors {
  /** Runs after the body parsers: sets the headers when the origin is the named client's (or global). */
  answer: RequestHandler;
  /** OPTIONS on the route's path. */
  preflight: RequestHandler;
}

/** The client a request names: the form's client_id, else the Basic authorization's user, else the Bearer token's. */
export function clientNamedBy(req: Request): string | undefined {
  const body = req.body as Record<string, unknown> | undefined;
  if (typeof body?.client_id === 'string' && body.client_id.length > 0) return body.client_id;
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) {
      try {
        return decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      } catch {
        return undefined;
      }
    }
  }
  const bearer = presentedTokenOf(req.headers.authorization)?.token;
  if (bearer) {
    // Only to choose which origins may read the answer: an invalid or expired token still gets its 401, readable by
    // the app it names (so that the app can refresh), and never anything more.
    try {
      const claim = jose().decodeJwt(bearer).client_id;
      return typeof claim === 'string' ? claim : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function allow(res: Response, origin: string): void {
  res.vary('Origin');
  res.set('Access-Control-Allow-Origin', origin);
  res.set('Access-Control-Expose-Headers', EXPOSE_HEADERS);
}

export function createClientCors(origins: ClientOrigins): ClientCors {
  const answer: RequestHandler = (req, res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined) return next();
    res.vary('Origin');
    if (origins.isGlobal(origin)) {
      allow(res, origin);
      return next();
    }
    const clientId = clientNamedBy(req);
    if (clientId === undefined || clientId.length > 2048) return next();
    origins.listedBy(clientId, origin).then(
      (listed) => {
        if (listed) allow(res, origin);
        next();
      },
      (err: unknown) => next(err),
    );
  };

  const preflight: RequestHandler = (req, res, next) => {
    const origin = req.headers.origin;
    res.vary('Origin');
    const done = (allowed: boolean) => {
      if (allowed && origin !== undefined) {
        res.set({
          'Access-Control-Allow-Origin': origin,
          'Access-Control-Allow-Methods': 'GET, POST',
          'Access-Control-Allow-Headers': ALLOW_HEADERS,
          'Access-Control-Max-Age': MAX_AGE_SECONDS,
        });
      }
      res.status(204).end();
    };
    if (origin === undefined || origin.length > 2048) return done(false);
    if (origins.isGlobal(origin)) return done(true);
    origins.listedByAny(origin).then(done, (err: unknown) => next(err));
  };

  return { answer, preflight };
}
