import { registrationOpen } from '../../services/auth.service';
import { signInTargetOf } from '../../services/oauth/sign-in-context';
import { z } from 'zod';
import { AppError } from '../../errors';
import { completeSecondFactor, methodsOfMfaToken, signInWithPasskey, type SecondFactorProof } from '../../services/mfa/sign-in.service';
import { renderLoginPage, renderSecondStepPage } from '../../views/login';
import { requestMeta } from '../shared';
import { authenticationResponseField } from '../../wire/auth/mfa.schemas';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { hostedPage, optionalText, PAGE, refuseForm, text } from './page-kit';
import { finishSignIn } from './sign-in-flow';

/** A JSON-encoded form field checked against its schema; undefined when absent or malformed. */
function parseJsonField<T>(value: string | undefined, schema: z.ZodType<T>): T | undefined {
  if (!value || value.length > 65536) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The proof fields of the hosted second step; undefined when none (or more than one) is filled in. */
function proofOf(body: { code: string; recovery_code: string; passkey: string }): SecondFactorProof | undefined {
  const code = body.code.trim();
  const recovery = body.recovery_code.trim();
  const passkey = parseJsonField(body.passkey, authenticationResponseField);
  if ([code, recovery, passkey].filter(Boolean).length !== 1) return undefined;
  if (code) return { code };
  if (recovery) return { recovery_code: recovery };
  return passkey ? { passkey } : undefined;
}

/**
 * The hosted second step (CONTRACT §10) and the password-less passkey sign-in: form posts of the /login flow, with
 * the same per-IP budget as the password form.
 */
export function createMfaPagesRouter(deps: RouteDeps) {
  const post = {
    ...PAGE,
    method: 'post',
    auth: 'none',
    rateLimit: true,
    csrf: refuseForm,
    response: { description: 'HTML page or 303', kind: 'html' },
  } as const;

  return declareRouter(deps, [
    route(
      {
        ...post,
        path: '/login/mfa',
        summary: 'Second step of the hosted sign-in (form post: code, recovery_code or passkey, with the mfa_token)',
        body: z.object({
          return_to: optionalText(4096),
          mfa_token: text(512),
          code: text(16),
          recovery_code: text(64),
          passkey: text(65536),
        }),
      },
      async ({ body, env, ctx }, req) => {
        const returnTo = body.return_to;
        const mfaToken = body.mfa_token;
        const { t } = env;
        const { application, formTargets } = await signInTargetOf(ctx, returnTo);
        const registerLink = registrationOpen(ctx.settings.current.values);
        const startOver = () =>
          hostedPage(
            ({ csrf }) => renderLoginPage({ csrf, returnTo, error: t.secondStep.expired, errorField: '_form', application, registerLink }),
            401,
            formTargets,
          );
        const methods = mfaToken ? await methodsOfMfaToken(ctx, mfaToken) : undefined;
        if (!methods) return startOver();
        const proof = proofOf(body);
        const errorField = !proof ? undefined : 'passkey' in proof ? '_form' : 'recovery_code' in proof ? 'recovery_code' : 'code';
        const again = (status: number, error: string) =>
          hostedPage(
            ({ csrf }) => renderSecondStepPage({ csrf, returnTo, mfaToken, methods, error, errorField, application }),
            status,
            formTargets,
          );
        if (!proof) return again(400, t.secondStep.enterCode);
        try {
          const result = await completeSecondFactor(ctx, { mfa_token: mfaToken, ...proof }, requestMeta(req));
          return await finishSignIn(ctx, req, result, returnTo);
        } catch (err) {
          if (err instanceof AppError && err.code === 'invalid_credentials') {
            if (!(await methodsOfMfaToken(ctx, mfaToken))) return startOver();
            return again(401, proof.passkey ? t.secondStep.passkeyFailed : t.secondStep.codeInvalid);
          }
          if (err instanceof AppError && err.code === 'too_many_attempts') return again(429, t.secondStep.tooMany).withHeaders(err.headers);
          if (err instanceof AppError && err.code === 'unauthorized') return startOver();
          throw err;
        }
      },
    ),
    route(
      {
        ...post,
        path: '/login/passkey',
        summary: 'Password-less sign-in (form post of the assertion made by the page script)',
        body: z.object({ return_to: optionalText(4096), response: text(65536) }),
      },
      async ({ body, env, ctx }, req) => {
        const { t } = env;
        const { application, formTargets } = await signInTargetOf(ctx, body.return_to);
        const context = { application, registerLink: registrationOpen(ctx.settings.current.values) };
        const failed = () =>
          hostedPage(
            ({ csrf }) =>
              renderLoginPage({ csrf, returnTo: body.return_to, error: t.login.passkeyFailed, errorField: '_form', ...context }),
            401,
            formTargets,
          );
        const response = parseJsonField(body.response, authenticationResponseField);
        if (!response) return failed();
        try {
          return await finishSignIn(ctx, req, await signInWithPasskey(ctx, response, requestMeta(req)), body.return_to);
        } catch (err) {
          if (err instanceof AppError && err.code === 'invalid_credentials') return failed();
          throw err;
        }
      },
    ),
  ]);
}
