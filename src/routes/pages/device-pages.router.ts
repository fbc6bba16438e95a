import { z } from 'zod';
import { Redirect } from '../../http/outcome';
import { needsSecondFactorForAdmin } from '../../services/mfa/policy';
import { decideUserCode, deviceNeedsSecondFactor, lookUpUserCode } from '../../services/oauth/device.service';
import type { Principal } from '../../services/principal';
import { renderOAuthErrorPage } from '../../views/consent';
import { renderDeviceConfirmPage, renderDeviceDonePage, renderDeviceEntryPage } from '../../views/device';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { describeScopes } from './page-messages';
import { hostedPage, optionalText, PAGE, refuseForm, text } from './page-kit';
import { enrolUrlFor } from './sign-in-flow';
import type { ServiceContext } from '../../services/context';

/**
 * /device (RFC 8628 §3.3, CONTRACT §12): a signed-in person (with their second factor where the account has one) types
 * the code a device shows, sees the app and its scopes, and approves or denies. Wrong codes are limited per browser
 * session (device.service.ts).
 */
export function createDevicePagesRouter(deps: RouteDeps) {
  const app = deps.ctx;
  const { config } = app;
  const page = { ...PAGE, response: { description: 'HTML page', kind: 'html' } } as const;
  const deviceUrlFor = (userCode: string | undefined) =>
    `${config.baseUrl}/device${userCode ? `?${new URLSearchParams({ user_code: userCode })}` : ''}`;
  const loginUrlFor = (userCode: string | undefined) =>
    `${config.baseUrl}/login?${new URLSearchParams({ return_to: deviceUrlFor(userCode) })}`;

  /**
   * Where the browser must go first (sign-in, second factor, or an admin's enrolment) as `{ next }`, or the signed-in
   * person as `{ signedIn }` when it may stay.
   */
  const detour = async (
    ctx: ServiceContext,
    principal: Principal | undefined,
    userCode: string | undefined,
  ): Promise<{ next: string; signedIn?: undefined } | { next?: undefined; signedIn: Principal }> => {
    const signedIn = principal && !principal.clientId ? principal : undefined;
    if (!signedIn) return { next: loginUrlFor(userCode) };
    if (needsSecondFactorForAdmin(ctx.settings.current.values, signedIn)) return { next: enrolUrlFor(deviceUrlFor(userCode)) };
    if (await deviceNeedsSecondFactor(ctx, signedIn)) return { next: loginUrlFor(userCode) };
    return { signedIn };
  };

  return declareRouter(deps, [
    route(
      {
        ...page,
        method: 'get',
        path: '/device',
        summary: 'Device code entry page',
        auth: 'browser',
        query: z.object({ user_code: optionalText(32) }),
      },
      async ({ query, principal, ctx }) => {
        const { next, signedIn } = await detour(ctx, principal, query.user_code);
        if (next !== undefined) return new Redirect(next);
        return hostedPage(({ csrf }) => renderDeviceEntryPage({ csrf, userCode: query.user_code, userEmail: signedIn.email }));
      },
    ),
    route(
      {
        ...page,
        method: 'post',
        path: '/device',
        rateLimit: true,
        summary: 'Device code entry (form post)',
        auth: 'browser',
        csrf: refuseForm,
        body: z.object({ user_code: text(32) }),
      },
      async ({ body, principal, env, ctx }) => {
        const { next, signedIn } = await detour(ctx, principal, body.user_code);
        if (next !== undefined) return new Redirect(next);
        const found = await lookUpUserCode(ctx, signedIn, body.user_code);
        if (!found.ok) {
          const tooMany = found.reason === 'too_many';
          const error = tooMany ? env.t.device.tooMany : env.t.device.wrongCode;
          return hostedPage(
            ({ csrf }) => renderDeviceEntryPage({ csrf, userCode: body.user_code, userEmail: signedIn.email, error }),
            tooMany ? 429 : 400,
          );
        }
        const { info } = found;
        const scopes = describeScopes(env.t, info.scopes);
        return hostedPage(({ csrf }) =>
          renderDeviceConfirmPage({
            csrf,
            userCode: info.userCode,
            clientName: info.clientName,
            scopes,
            resources: info.resources,
            userEmail: signedIn.email,
            unreviewed: info.unreviewed,
          }),
        );
      },
    ),
    route(
      {
        ...page,
        method: 'post',
        path: '/device/decide',
        rateLimit: true,
        summary: 'Approve or deny a device (form post)',
        auth: 'browser',
        csrf: refuseForm,
        body: z.object({ user_code: text(32), decision: text(10) }),
      },
      async ({ body, principal, env, ctx }) => {
        const { next, signedIn } = await detour(ctx, principal, body.user_code);
        if (next !== undefined) return new Redirect(next);
        if (body.decision !== 'approve' && body.decision !== 'deny') {
          return hostedPage(() => renderOAuthErrorPage({ title: env.t.consent.noDecisionTitle, message: env.t.consent.noDecision }), 400);
        }
        const approved = body.decision === 'approve';
        const result = await decideUserCode(ctx, signedIn, body.user_code, approved);
        if (!result.ok) {
          const tooMany = result.reason === 'too_many';
          const error = tooMany ? env.t.device.tooMany : env.t.device.usedCode;
          return hostedPage(({ csrf }) => renderDeviceEntryPage({ csrf, userEmail: signedIn.email, error }), tooMany ? 429 : 400);
        }
        return hostedPage(() => renderDeviceDonePage({ approved, clientName: result.clientName }));
      },
    ),
  ]);
}
