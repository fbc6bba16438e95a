import type { RequestHandler } from 'express';
import { AppError } from '../errors';
import { needsSecondFactorForAdmin } from '../services/mfa/policy';
import type { LiveSettings } from '../services/settings/live-settings';

/**
 * mfa_required_for_admins (CONTRACT §10; a runtime setting, §18), behind `authenticate`: an admin-tier caller whose session has no second
 * factor in its `amr` gets 403 mfa_required from the users, RBAC and admin APIs. Non-admins fall through to the
 * permission checks as before.
 */
export function requireAdminSecondFactor(settings: LiveSettings): RequestHandler {
  return (req, _res, next) => {
    if (req.principal && needsSecondFactorForAdmin(settings.current.values, req.principal)) {
      return next(
        new AppError('mfa_required', 'Your role requires a second factor: set one up at /account and sign in with it', { status: 403 }),
      );
    }
    next();
  };
}
