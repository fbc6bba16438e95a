import type { RequestHandler } from 'express';
import type { Config } from '../config';
import { AppError } from '../errors';
import { needsSecondFactorForAdmin } from '../services/mfa/policy';

/**
 * MFA_REQUIRED_FOR_ADMINS (CONTRACT §10), behind `authenticate`: an admin-tier caller whose session has no second
 * factor in its `amr` gets 403 mfa_required from the users, RBAC and admin APIs. Non-admins fall through to the
 * permission checks as before.
 */
export function requireAdminSecondFactor(config: Pick<Config, 'mfaRequiredForAdmins'>): RequestHandler {
  return (req, _res, next) => {
    if (req.principal && needsSecondFactorForAdmin(config, req.principal)) {
      return next(
        new AppError('mfa_required', 'Your role requires a second factor: set one up at /account and sign in with it', { status: 403 }),
      );
    }
    next();
  };
}
