import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { forbidden, unauthorized } from '../errors';
import { hasPermission } from '../services/principal';
import { SPEC_ADMIN_ROLES } from '../services/rbac-policy';

/** Requires a permission from the live lookup done by `authenticate` (super_admin holds every permission). */
export function requirePermission(permission: string): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!req.principal) return next(unauthorized());
    if (!hasPermission(req.principal, permission)) return next(forbidden(`Requires permission ${permission}`));
    next();
  };
}

/** Requires one of the given global roles. */
export function requireRole(...roles: string[]): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const { principal } = req;
    if (!principal) return next(unauthorized());
    if (!roles.some((r) => principal.roleNames.includes(r))) {
      return next(forbidden(`Requires role ${roles.join(' or ')}`));
    }
    next();
  };
}

/** The spec's "permission `admin`": role admin or super_admin (CONTRACT §6). */
export const requireAdmin = (): RequestHandler => requireRole(...SPEC_ADMIN_ROLES);
