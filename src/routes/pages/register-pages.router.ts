import { z } from 'zod';
import { AppError } from '../../errors';
import { Redirect } from '../../http/outcome';
import * as auth from '../../services/auth.service';
import { minPasswordLength, PasswordRefused } from '../../services/password-policy';
import { resolveReturnTo } from '../../services/oauth/return-to';
import { signInApplicationFor } from '../../services/oauth/sign-in-context';
import { renderRegisteredPage, renderRegisterPage, type RegisterField } from '../../views/register';
import { requestMeta, signedInCookies } from '../shared';
import { registerBody } from '../../wire/auth/auth.schemas';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { hostedPage, optionalText, PAGE, refuseForm, text } from './page-kit';
import { passwordRefusalText } from './page-messages';

const FIELDS: readonly RegisterField[] = ['first_name', 'last_name', 'email', 'password'];

/**
 * /register (CONTRACT §15): the page of POST /api/auth/register, validated by the same registerBody and creating the
 * account through the same service (which refuses it when REGISTRATION=closed; the page is then a 404). Afterwards
 * the person is signed in and told to confirm the address; an OAuth flow continues from there.
 */
export function createRegisterPagesRouter(deps: RouteDeps) {
  const app = deps.ctx;
  const { config } = app;
  const page = { ...PAGE, response: { description: 'HTML page', kind: 'html' } } as const;
  const requireOpen = () => {
    if (!auth.registrationOpen(app.settings.current.values)) throw new AppError('not_found', 'Registration is closed');
  };

  return declareRouter(deps, [
    route(
      {
        ...page,
        method: 'get',
        path: '/register',
        summary: 'Sign-up page',
        auth: 'browser',
        query: z.object({ return_to: optionalText(4096), done: optionalText(8) }),
      },
      async ({ query, principal, ctx }) => {
        requireOpen();
        const application = await signInApplicationFor(ctx, query.return_to);
        if (query.done === '1' && principal && !principal.clientId) {
          const continueTo = resolveReturnTo(config, query.return_to);
          return hostedPage(() => renderRegisteredPage({ email: principal.email, continueTo, application }));
        }
        return hostedPage(({ csrf }) =>
          renderRegisterPage({ csrf, returnTo: query.return_to, minLength: minPasswordLength(ctx), application }),
        );
      },
    ),

    route(
      {
        ...page,
        method: 'post',
        path: '/register',
        summary: 'Sign up (form post)',
        auth: 'none',
        rateLimit: true,
        csrf: refuseForm,
        body: z.object({
          return_to: optionalText(4096),
          first_name: text(200),
          last_name: text(200),
          email: text(300),
          password: text(1024),
          password_confirm: text(1024),
        }),
      },
      async ({ body, env, ctx }, req) => {
        requireOpen();
        const { t } = env;
        const returnTo = body.return_to;
        const values = { first_name: body.first_name, last_name: body.last_name, email: body.email };
        const again = async (status: number, errors: Partial<Record<RegisterField | 'form', string>>) => {
          const application = await signInApplicationFor(ctx, returnTo);
          return hostedPage(
            ({ csrf }) => renderRegisterPage({ csrf, returnTo, minLength: minPasswordLength(ctx), values, errors, application }),
            status,
          );
        };
        const parsed = registerBody.safeParse(body);
        const errors: Partial<Record<RegisterField | 'form', string>> = {};
        if (!parsed.success) {
          const messages: Record<RegisterField, string> = {
            first_name: t.register.errors.firstName,
            last_name: t.register.errors.lastName,
            email: t.register.errors.email,
            password: t.register.errors.password(minPasswordLength(ctx)),
          };
          for (const issue of parsed.error.issues) {
            const field = FIELDS.find((f) => f === issue.path[0]);
            if (field) errors[field] = messages[field];
          }
        }
        if (!errors.password && body.password !== body.password_confirm) errors.password = t.register.errors.mismatch;
        if (!parsed.success || errors.password) return again(400, { form: t.register.invalid, ...errors });
        let result: Awaited<ReturnType<typeof auth.register>>;
        try {
          result = await auth.register(ctx, parsed.data, requestMeta(req));
        } catch (err) {
          if (err instanceof PasswordRefused) return again(400, { form: t.register.invalid, password: passwordRefusalText(t, err) });
          if (err instanceof AppError && err.code === 'conflict')
            return again(409, { form: t.register.emailTaken, email: t.register.emailTaken });
          throw err;
        }
        const target = resolveReturnTo(config, returnTo);
        return new Redirect(`/register?${new URLSearchParams({ done: '1', ...(target ? { return_to: target } : {}) })}`).withCookies(
          ...signedInCookies(config, result),
        );
      },
    ),
  ]);
}
