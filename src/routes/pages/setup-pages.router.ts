import { z } from 'zod';
import { AppError } from '../../errors';
import { Redirect } from '../../http/outcome';
import { minPasswordLength, PasswordRefused } from '../../services/password-policy';
import { completeSetup, isSetupTokenValid, SetupLinkInvalid } from '../../services/setup.service';
import { renderSetupDone, renderSetupForm, renderSetupInvalid } from '../../views/setup';
import { renderFormExpired } from '../../views/verify-email';
import { emailField, nameField, passwordField } from '../../wire/common.schemas';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { hostedPage, optionalText, PAGE, requireCsrf, text } from './page-kit';
import { passwordRefusalText } from './page-messages';

const setupForm = z.object({
  email: emailField,
  first_name: nameField('First name'),
  last_name: nameField('Last name'),
  password: passwordField,
});

/** /setup: the first-run page that creates the first super_admin from the one-time link (services/setup.service). */
export function createSetupPagesRouter(deps: RouteDeps) {
  const page = { ...PAGE, auth: 'none', response: { description: 'HTML page', kind: 'html' } } as const;

  return declareRouter(deps, [
    route(
      {
        ...page,
        method: 'get',
        path: '/setup',
        summary: 'First-run setup: create the first administrator',
        query: z.object({ token: text(), done: optionalText() }),
      },
      async ({ query, ctx }) => {
        if (query.done === '1') return hostedPage(renderSetupDone);
        if (!(await isSetupTokenValid(ctx, query.token))) return hostedPage(renderSetupInvalid, 404);
        return hostedPage(({ csrf }) => renderSetupForm({ token: query.token, csrf, minLength: minPasswordLength(ctx) }));
      },
    ),

    route(
      {
        ...page,
        method: 'post',
        path: '/setup',
        summary: 'First-run setup (form post)',
        csrf: requireCsrf(() => renderFormExpired('/setup')),
        body: z.object({
          token: text(),
          email: text(300),
          first_name: text(300),
          last_name: text(300),
          password: text(),
          password_confirm: text(),
        }),
      },
      async ({ body, env, ctx }) => {
        const { token } = body;
        const values = { email: body.email, first_name: body.first_name, last_name: body.last_name };
        type Field = 'email' | 'first_name' | 'last_name' | 'password';
        const again = (status: number, error: string, errorField: Field = 'password') =>
          hostedPage(({ csrf }) => renderSetupForm({ token, csrf, minLength: minPasswordLength(ctx), values, error, errorField }), status);

        if (!(await isSetupTokenValid(ctx, token))) return hostedPage(renderSetupInvalid, 404);
        const parsed = setupForm.safeParse(body);
        const { t } = env;
        if (!parsed.success) {
          // The field's own sentence in the page's language (the zod messages are the API's English).
          const field = parsed.error.issues[0]?.path[0];
          const errors = t.register.errors;
          const message =
            field === 'email'
              ? errors.email
              : field === 'first_name'
                ? errors.firstName
                : field === 'last_name'
                  ? errors.lastName
                  : errors.password(minPasswordLength(ctx));
          return again(400, message, field === 'email' || field === 'first_name' || field === 'last_name' ? field : 'password');
        }
        if (body.password !== body.password_confirm) return again(400, t.register.errors.mismatch);
        try {
          await completeSetup(ctx, token, {
            email: parsed.data.email,
            firstName: parsed.data.first_name,
            lastName: parsed.data.last_name,
            password: parsed.data.password,
          });
        } catch (err) {
          if (err instanceof PasswordRefused) return again(400, passwordRefusalText(t, err));
          if (err instanceof SetupLinkInvalid) return hostedPage(renderSetupInvalid, 404);
          if (err instanceof AppError && err.code === 'conflict') return again(409, t.setup.emailTaken, 'email');
          throw err;
        }
        return new Redirect('/setup?done=1');
      },
    ),
  ]);
}
