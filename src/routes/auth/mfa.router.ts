import type { PasskeyRow } from '../../db/repositories/webauthn-credentials.repo';
import { badRequest, notFound } from '../../errors';
import { loadFactors } from '../../services/mfa/factors.service';
import * as passkeys from '../../services/mfa/passkeys.service';
import { regenerateRecoveryCodes } from '../../services/mfa/recovery-codes.service';
import { completeSecondFactor, passkeyOptionsForMfaToken, signInWithPasskey } from '../../services/mfa/sign-in.service';
import * as totp from '../../services/mfa/totp.service';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { requestMeta, signedIn } from '../shared';
import { authResult } from './auth.schemas';
import {
  mfaLoginBody,
  mfaStatusBody,
  mfaTokenBody,
  passkeyCreatedBody,
  passkeyEnvelope,
  passkeyIdParam,
  passkeyLoginBody,
  passkeyRegisterBody,
  passkeyRenameBody,
  recoveryCodesBody,
  recoveryCodesResponse,
  totpConfirmBody,
  totpRemoveBody,
  totpSetupResponse,
  webauthnOptionsBody,
} from './mfa.schemas';

export function presentPasskey(p: PasskeyRow) {
  return {
    id: p.id,
    name: p.name,
    created_at: p.createdAt.toISOString(),
    last_used_at: p.lastUsedAt ? p.lastUsedAt.toISOString() : null,
  };
}

const removed = { status: 204, description: 'Removed', kind: 'empty' } as const;
const passkeyNotFound = () => notFound('Passkey');

/** Second factors, passkeys and the second step of sign-in (CONTRACT §10). Every answer is no-store. */
export function createMfaRouter(deps: RouteDeps) {
  const { ctx } = deps;
  const own = { auth: 'user', noStore: true } as const;
  // These set the SSO cookies without needing any: the login-CSRF rule of POST /login applies.
  const signIn = { auth: 'none', noStore: true, originCheck: true } as const;
  return declareRouter(
    deps,
    [
      route(
        {
          ...signIn,
          method: 'post',
          path: '/login/mfa',
          summary: 'Second step of a sign-in: mfa_token with code, recovery_code or passkey (an assertion); answers like POST /login',
          body: mfaLoginBody,
          response: { description: 'Signed in', schema: authResult },
          errors: [401],
        },
        async ({ body }, req, res) => signedIn(ctx.config, res, await completeSecondFactor(ctx, body, requestMeta(req))),
      ),
      route(
        {
          ...signIn,
          method: 'post',
          path: '/login/mfa/passkey-options',
          summary: "WebAuthn request options for the mfa_token's account (its passkeys)",
          body: mfaTokenBody,
          response: { description: 'PublicKeyCredentialRequestOptionsJSON', schema: webauthnOptionsBody },
          errors: [401],
        },
        async ({ body }) => passkeyOptionsForMfaToken(ctx, body.mfa_token),
      ),
      route(
        {
          ...own,
          method: 'get',
          path: '/mfa',
          summary: 'Own second factors',
          response: { description: '{ totp, passkeys, recovery_codes_left }', schema: mfaStatusBody },
        },
        async ({ principal }) => {
          const factors = await loadFactors(ctx.db, principal.userId);
          return { totp: factors.totp, passkeys: factors.passkeys.map(presentPasskey), recovery_codes_left: factors.recoveryCodesLeft };
        },
      ),
      route(
        {
          ...own,
          method: 'post',
          path: '/mfa/totp/setup',
          summary: 'Start TOTP enrolment: a pending base32 secret and its otpauth:// URL',
          response: { description: '{ secret, otpauth_url }', schema: totpSetupResponse },
          errors: [409],
        },
        async ({ principal }) => {
          const { secret, otpauthUrl } = await totp.setupTotp(ctx, principal);
          return { secret, otpauth_url: otpauthUrl };
        },
      ),
      route(
        {
          ...own,
          method: 'post',
          path: '/mfa/totp/confirm',
          summary: 'Confirm TOTP with a first code; returns 10 recovery codes (shown once)',
          body: totpConfirmBody,
          response: { description: '{ recovery_codes }', schema: recoveryCodesResponse },
          errors: [409],
        },
        async ({ principal, body }, req) => ({ recovery_codes: await totp.confirmTotp(ctx, principal, body.code, requestMeta(req)) }),
      ),
      route(
        {
          ...own,
          method: 'delete',
          path: '/mfa/totp',
          summary: 'Remove TOTP (body { password } or { code })',
          body: totpRemoveBody,
          response: removed,
          errors: [404],
        },
        async ({ principal, body }, req) => {
          await totp.removeTotp(ctx, principal, body, requestMeta(req));
        },
      ),
      route(
        {
          ...own,
          method: 'post',
          path: '/mfa/recovery-codes',
          summary: 'Replace the recovery codes (needs the password)',
          body: recoveryCodesBody,
          response: { description: '{ recovery_codes }', schema: recoveryCodesResponse },
          errors: [409],
        },
        async ({ principal, body }, req) => ({
          recovery_codes: await regenerateRecoveryCodes(ctx, principal, body.password, requestMeta(req)),
        }),
      ),
      route(
        {
          ...own,
          method: 'post',
          path: '/passkeys/register/options',
          summary: 'WebAuthn creation options for a new passkey of the caller',
          response: { description: 'PublicKeyCredentialCreationOptionsJSON', schema: webauthnOptionsBody },
        },
        async ({ principal }) => passkeys.passkeyRegistrationOptions(ctx, principal),
      ),
      route(
        {
          ...own,
          method: 'post',
          path: '/passkeys/register',
          summary: 'Register a passkey from the attestation response',
          body: passkeyRegisterBody,
          response: { status: 201, description: '{ passkey: { id, name, created_at } }', schema: passkeyCreatedBody },
          errors: [409],
        },
        async ({ principal, body }, req) => {
          const passkey = await passkeys.registerPasskey(ctx, principal, body, requestMeta(req));
          return { passkey: { id: passkey.id, name: passkey.name, created_at: passkey.createdAt.toISOString() } };
        },
      ),
      route(
        {
          ...signIn,
          method: 'post',
          path: '/passkeys/login/options',
          summary: 'WebAuthn request options for a password-less sign-in (discoverable credentials, no email)',
          response: { description: 'PublicKeyCredentialRequestOptionsJSON', schema: webauthnOptionsBody },
        },
        async () => passkeys.passkeyAssertionOptions(ctx, null),
      ),
      route(
        {
          ...signIn,
          method: 'post',
          path: '/passkeys/login',
          summary: 'Sign in with a passkey alone; answers like POST /login (amr ["hwk"])',
          body: passkeyLoginBody,
          response: { description: 'Signed in', schema: authResult },
          errors: [401],
        },
        async ({ body }, req, res) => signedIn(ctx.config, res, await signInWithPasskey(ctx, body.response, requestMeta(req))),
      ),
      route(
        {
          ...own,
          method: 'patch',
          path: '/passkeys/:id',
          summary: 'Rename a passkey (beyond CONTRACT §10)',
          params: passkeyIdParam,
          invalid: (issues, where) =>
            where === 'params'
              ? passkeyNotFound()
              : badRequest(
                  'Body is invalid',
                  issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message })),
                ),
          body: passkeyRenameBody,
          response: { description: '{ passkey }', schema: passkeyEnvelope },
        },
        async ({ principal, params, body }) => ({
          passkey: presentPasskey(await passkeys.renameOwnPasskey(ctx, principal, params.id, body.name)),
        }),
      ),
      route(
        {
          ...own,
          method: 'delete',
          path: '/passkeys/:id',
          summary: 'Remove a passkey',
          params: passkeyIdParam,
          invalid: passkeyNotFound,
          response: removed,
        },
        async ({ principal, params }, req) => {
          await passkeys.removePasskey(ctx, principal, params.id, requestMeta(req));
        },
      ),
    ],
    { tags: ['Second factors'] },
  );
}
