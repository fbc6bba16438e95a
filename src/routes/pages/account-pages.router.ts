import { Router, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../../errors';
import { PASSWORD_MIN_LENGTH } from '../../lib/password';
import { csrfValid, issueCsrf } from '../../middleware/csrf';
import { clearSessionCookies } from '../../middleware/session-cookies';
import * as links from '../../services/email-links.service';
import { normalizeEmail } from '../../services/auth.service';
import { emailField, passwordField } from '../common.schemas';
import { renderForgotPasswordForm, renderForgotPasswordSent } from '../../views/forgot-password';
import type { RouteDeps } from '../types';
import { renderSetPasswordDone, renderSetPasswordForm, renderSetPasswordInvalid } from '../../views/set-password';
import { renderFormExpired, renderVerifyEmailDone, renderVerifyEmailForm, renderVerifyEmailInvalid } from '../../views/verify-email';

function stringField(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A link that is invalid, expired or used: the services say so with validation_error. */
function isInvalidLink(err: unknown): boolean {
  return err instanceof AppError && err.code === 'validation_error';
}

/** Pages carry link tokens and CSRF values: never cached, never stored by a shared cache. */
const noStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  res.set('Pragma', 'no-cache');
  next();
};

/** /verify-email and /set-password: server-rendered, no JavaScript, form posts answered with 303 (CONTRACT §5). */
export function createAccountPagesRouter({ ctx }: RouteDeps): Router {
  const router = Router();
  /** The link behind a token, or undefined when it is invalid, expired or used. */
  const inspectLink = async (token: string) => {
    try {
      return await links.inspectEmailLink(ctx, token);
    } catch (err) {
      if (!isInvalidLink(err)) throw err;
      return undefined;
    }
  };
  router.use(['/verify-email', '/set-password', '/forgot-password'], noStore);

  router.get('/verify-email', async (req, res) => {
    if (req.query.verified === '1') return void res.type('html').send(renderVerifyEmailDone());
    const token = stringField(req.query.token);
    const link = await inspectLink(token);
    if (!link || link.purpose !== 'verify_email') return void res.status(400).type('html').send(renderVerifyEmailInvalid());
    res.type('html').send(renderVerifyEmailForm({ email: link.email, token, csrf: issueCsrf(req, res, ctx.config) }));
  });

  router.post('/verify-email', async (req, res) => {
    if (!csrfValid(req, ctx.config)) return void res.status(403).type('html').send(renderFormExpired('/verify-email'));
    try {
      await links.confirmEmailWithLink(ctx, stringField(req.body?.token));
    } catch (err) {
      if (!isInvalidLink(err)) throw err;
      return void res.status(400).type('html').send(renderVerifyEmailInvalid());
    }
    res.redirect(303, '/verify-email?verified=1');
  });

  router.get('/set-password', async (req, res) => {
    if (req.query.done === '1') return void res.type('html').send(renderSetPasswordDone());
    const token = stringField(req.query.token);
    const link = await inspectLink(token);
    if (!link) return void res.status(400).type('html').send(renderSetPasswordInvalid());
    res.type('html').send(
      renderSetPasswordForm({ email: link.email, token, csrf: issueCsrf(req, res, ctx.config), minLength: PASSWORD_MIN_LENGTH }),
    );
  });

  router.post('/set-password', async (req, res) => {
    if (!csrfValid(req, ctx.config)) return void res.status(403).type('html').send(renderFormExpired('/set-password'));
    const token = stringField(req.body?.token);
    const password = stringField(req.body?.password);
    const link = await inspectLink(token);
    if (!link) return void res.status(400).type('html').send(renderSetPasswordInvalid());

    const checked = passwordField.safeParse(password);
    const problem = !checked.success
      ? checked.error.issues[0]?.message ?? 'Invalid password'
      : password !== stringField(req.body?.password_confirm)
        ? 'The two passwords are not the same'
        : undefined;
    if (problem) {
      const csrf = issueCsrf(req, res, ctx.config);
      return void res.status(400).type('html').send(renderSetPasswordForm({ email: link.email, token, csrf, minLength: PASSWORD_MIN_LENGTH, error: problem }));
    }

    try {
      await links.setPasswordWithLink(ctx, token, password);
    } catch (err) {
      if (!isInvalidLink(err)) throw err;
      return void res.status(400).type('html').send(renderSetPasswordInvalid());
    }
    // Every session of the account was just revoked: drop this browser's now-dead SSO cookies too.
    clearSessionCookies(res, ctx.config);
    res.redirect(303, '/set-password?done=1');
  });

  router.get('/forgot-password', (req, res) => {
    if (req.query.sent === '1') return void res.type('html').send(renderForgotPasswordSent());
    res.type('html').send(renderForgotPasswordForm({ csrf: issueCsrf(req, res, ctx.config) }));
  });

  router.post('/forgot-password', async (req, res) => {
    if (!csrfValid(req, ctx.config)) return void res.status(403).type('html').send(renderFormExpired('/forgot-password'));
    const email = emailField.safeParse(stringField(req.body?.email));
    if (!email.success) {
      const csrf = issueCsrf(req, res, ctx.config);
      return void res
        .status(400)
        .type('html')
        .send(renderForgotPasswordForm({ csrf, email: stringField(req.body?.email), error: 'Enter a valid email address.' }));
    }
    await links.requestPasswordReset(ctx, normalizeEmail(email.data));
    res.redirect(303, '/forgot-password?sent=1');
  });

  return router;
}
