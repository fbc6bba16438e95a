import type { z } from 'zod';
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
import { authResult } from '../../wire/auth/auth.schemas';
import {
  mfaLoginBody,
  mfaStatusBody,
  mfaTokenBody,
  optionalProofBody,
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
} from '../../wire/auth/mfa.schemas';

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
const invalidBody = (issues: z.core.$ZodIssue[]) =>
  badRequest(
    'Body is invalid',
    issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message })),
  );

/** CONTRACT §11, said once for every factor change (docs/mfa.md "Re-authentication"). */
const REAUTH =
  'Needs a sign-in at most 10 minutes old, or a proof in the body: one of `password`, `code` (authenticator app), `recovery_code`, ' +
  '`passkey` (an assertion with options from POST /api/auth/passkeys/login/options); else 403 reauthentication_required ' +
  '(403 mfa_required when the account has a second factor and the session was opened without one). A wrong proof is 403 ' +
  'reauthentication_failed and counts on the sign-in throttle (429 too_many_attempts).';
const REAUTH_ALWAYS = `${REAUTH} This one always needs the proof, however recent the sign-in.`;

/** Second factors, passkeys and the second step of sign-in (CONTRACT §10). Every answer is no-store. */
export function createMfaRouter(deps: RouteDeps) {
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
        async ({ body, ctx }, req) => signedIn(ctx.config, await completeSecondFactor(ctx, body, requestMeta(req))),
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
        async ({ body, ctx }) => passkeyOptionsForMfaToken(ctx, body.mfa_token),
      ),
      route(
        {
          ...own,
          method: 'get',
          path: '/mfa',
          summary: 'Own second factors',
          response: { description: '{ totp, passkeys, recovery_codes_left }', schema: mfaStatusBody },
        },
        async ({ principal, ctx }) => {
          const factors = await loadFactors(ctx.db, principal.userId);
          return { totp: factors.totp, passkeys: factors.passkeys.map(presentPasskey), recovery_codes_left: factors.recoveryCodesLeft };
        },
      ),
      route(
        {
          ...own,
          method: 'post',
          path: '/mfa/totp/setup',
          summary: 'Start TOTP enrolment: a pending base32 secret and its otpauth:// URL (10 minutes, this session only)',
          description: REAUTH,
          body: optionalProofBody,
          response: { description: '{ secret, otpauth_url }', schema: totpSetupResponse },
          errors: [409],
        },
        async ({ principal, body, ctx }, req) => {
          const { secret, otpauthUrl } = await totp.setupTotp(ctx, principal, body.proof, requestMeta(req));
          return { secret, otpauth_url: otpauthUrl };
        },
      ),
      route(
        {
          ...own,
          method: 'post',
          path: '/mfa/totp/confirm',
          summary: 'Confirm TOTP with a first code; returns 10 recovery codes (shown once)',
          description:
            `${REAUTH} Here \`code\` is the new app's first code; a wrong one counts like a wrong password ` +
            '(403 reauthentication_failed).',
          body: totpConfirmBody,
          response: { description: '{ recovery_codes }', schema: recoveryCodesResponse },
          errors: [409],
        },
        async ({ principal, body, ctx }, req) => ({
          recovery_codes: await totp.confirmTotp(ctx, principal, body.code, body.proof, requestMeta(req)),
        }),
      ),
      route(
        {
          ...own,
          method: 'delete',
          path: '/mfa/totp',
          summary: 'Remove TOTP (body: one of password, code, recovery_code, passkey)',
          description: REAUTH_ALWAYS,
          body: totpRemoveBody,
          response: removed,
          errors: [404],
        },
        async ({ principal, body, ctx }, req) => {
          await totp.removeTotp(ctx, principal, body.proof, requestMeta(req));
        },
      ),
      route(
        {
          ...own,
          method: 'post',
          path: '/mfa/recovery-codes',
          summary: 'Replace the recovery codes (body: one of password, code, recovery_code, passkey)',
          description: REAUTH_ALWAYS,
          body: recoveryCodesBody,
          response: { description: '{ recovery_codes }', schema: recoveryCodesResponse },
          errors: [409],
        },
        async ({ principal, body, ctx }, req) => ({
          recovery_codes: await regenerateRecoveryCodes(ctx, principal, body.proof, requestMeta(req)),
        }),
      ),
      route(
        {
          ...own,
          method: 'post',
          path: '/passkeys/register/options',
          summary: 'WebAuthn creation options for a new passkey of the caller',
          description: `${REAUTH} A proof sent here makes the sign-in recent for the register call that follows.`,
          body: optionalProofBody,
          response: { description: 'PublicKeyCredentialCreationOptionsJSON', schema: webauthnOptionsBody },
        },
        async ({ principal, body, ctx }, req) => passkeys.passkeyRegistrationOptions(ctx, principal, body.proof, requestMeta(req)),
      ),
      route(
        {
          ...own,
          method: 'post',
          path: '/passkeys/register',
          summary: 'Register a passkey from the attestation response',
          description: `${REAUTH} The account's first factor comes with its 10 recovery codes in \`recovery_codes\` (shown once).`,
          body: passkeyRegisterBody,
          response: { status: 201, description: '{ passkey: { id, name, created_at }, recovery_codes? }', schema: passkeyCreatedBody },
          errors: [409],
        },
        async ({ principal, body, ctx }, req) => {
          const { passkey, recoveryCodes } = await passkeys.registerPasskey(ctx, principal, body, body.proof, requestMeta(req));
          return {
            passkey: { id: passkey.id, name: passkey.name, created_at: passkey.createdAt.toISOString() },
            ...(recoveryCodes ? { recovery_codes: recoveryCodes } : {}),
          };
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
        async ({ ctx }) => passkeys.passkeyAssertionOptions(ctx, null),
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
        async ({ body, ctx }, req) => signedIn(ctx.config, await signInWithPasskey(ctx, body.response, requestMeta(req))),
      ),
      route(
        {
          ...own,
          method: 'patch',
          path: '/passkeys/:id',
          summary: 'Rename a passkey (beyond CONTRACT §10)',
          params: passkeyIdParam,
          invalid: (issues, where) => (where === 'params' ? passkeyNotFound() : invalidBody(issues)),
          body: passkeyRenameBody,
          response: { description: '{ passkey }', schema: passkeyEnvelope },
        },
        async ({ principal, params, body, ctx }, req) => ({
          passkey: presentPasskey(await passkeys.renameOwnPasskey(ctx, principal, params.id, body.name, requestMeta(req))),
        }),
      ),
      route(
        {
          ...own,
          method: 'delete',
          path: '/passkeys/:id',
          summary: 'Remove a passkey',
          description: REAUTH,
          params: passkeyIdParam,
          body: optionalProofBody,
          invalid: (issues, where) => (where === 'params' ? passkeyNotFound() : invalidBody(issues)),
          response: removed,
        },
        async ({ principal, params, body, ctx }, req) => {
          await passkeys.removePasskey(ctx, principal, params.id, body.proof, requestMeta(req));
        },
      ),
    ],
    { tags: ['Second factors'] },
  );
}
