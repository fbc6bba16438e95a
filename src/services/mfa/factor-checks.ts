import type * as OTPAuthTypes from 'otpauth';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { DbOrTrx } from '../../db';
import { consumeRecoveryCode, countUnusedRecoveryCodes } from '../../db/repositories/mfa-recovery-codes.repo';
import { findTotp, useTotpStep } from '../../db/repositories/mfa-totp.repo';
import { findUserById } from '../../db/repositories/users.repo';
import { consumeChallenge, type ChallengePurpose } from '../../db/repositories/webauthn-challenges.repo';
import { findPasskeyByCredentialId, recordPasskeyUse, type PasskeyRow } from '../../db/repositories/webauthn-credentials.repo';
import { sha256Hex } from '../../lib/crypto';
import type { RequestMeta, ServiceContext } from '../context';
import { recordFactorEvent } from './factors.service';
import { mailRecoveryCodeUsed } from './notifications';

/**
 * Checking a second factor: a TOTP code, a recovery code, a passkey assertion. Signing in (sign-in.service.ts) and
 * re-authenticating (reauthenticate.service.ts) use these; enrolling and removing a factor (totp, recovery-codes,
 * passkeys services) need a re-authentication first, so the checks live below both and no import runs in a circle.
 */

/** Loaded on first use, not at start (issue 10: nothing loaded that a request has not needed yet). */
export const otpauth = () => require('otpauth') as typeof import('otpauth');

/** RFC 6238 as CONTRACT §10 fixes it: SHA-1, 6 digits, 30 s steps, one step of drift either way. */
export const TOTP_PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
const DRIFT_STEPS = 1;
/** The sealing purpose (associated data) of TOTP secrets at rest. */
export const SEAL_PURPOSE = 'mfa.totp.secret';
const CODE_SHAPE = /^\d{6}$/;

export function totpOf(ctx: ServiceContext, secretBase32: string, label: string): OTPAuthTypes.TOTP {
  return new (otpauth().TOTP)({
    ...TOTP_PARAMS,
    issuer: new URL(ctx.config.baseUrl).host,
    label,
    secret: otpauth().Secret.fromBase32(secretBase32),
  });
}

/** The time step a code belongs to (within the drift window), or undefined when it matches none. */
export function matchingStep(ctx: ServiceContext, secretBase32: string, code: string): number | undefined {
  const token = code.replace(/\s/g, '');
  if (!CODE_SHAPE.test(token)) return undefined;
  const timestamp = ctx.clock.now().getTime();
  // otpauth compares in constant time.
  const delta = totpOf(ctx, secretBase32, '').validate({ token, timestamp, window: DRIFT_STEPS });
  if (delta === null) return undefined;
  return otpauth().TOTP.counter({ period: TOTP_PARAMS.period, timestamp }) + delta;
}

/**
 * Checks a code against the user's confirmed TOTP and records its time step in the same statement, so each code
 * is accepted once, across instances too (RFC 6238 §5.2).
 */
export async function verifyTotpCode(ctx: ServiceContext, db: DbOrTrx, userId: string, code: string): Promise<boolean> {
  const row = await findTotp(db, userId);
  if (!row?.confirmedAt) return false;
  const step = matchingStep(ctx, ctx.sealer.open(row.secretSealed, SEAL_PURPOSE), code);
  if (step === undefined) return false;
  return useTotpStep(db, userId, step, ctx.clock.now(), { confirm: false });
}

/** Case, spaces and dashes do not matter when a person types a code back. */
export function hashRecoveryCode(code: string): string {
  return sha256Hex(code.toLowerCase().replace(/[^a-z0-9]/g, ''));
}

/**
 * Burns one recovery code of the user (single use, atomic) and records it in the caller's transaction. On success
 * the owner is mailed once that transaction is done (`afterCommit`). Returns whether the code was valid and unused.
 */
export async function useRecoveryCode(
  ctx: ServiceContext,
  trx: DbOrTrx,
  userId: string,
  code: string,
  meta?: RequestMeta,
): Promise<{ ok: false } | { ok: true; afterCommit: () => Promise<void> }> {
  if (!(await consumeRecoveryCode(trx, userId, hashRecoveryCode(code), ctx.clock.now()))) return { ok: false };
  const left = await countUnusedRecoveryCodes(trx, userId);
  await recordFactorEvent(ctx, trx, 'mfa.recovery_code.used', userId, { left }, meta);
  return {
    ok: true,
    afterCommit: async () => {
      const user = await findUserById(ctx.db, userId);
      if (user) mailRecoveryCodeUsed(ctx, user, left);
    },
  };
}

/** Loaded on the first passkey ceremony, not at start: the WebAuthn stack is the largest module tree we have (issue 10). */
export const webauthn = () => require('@simplewebauthn/server') as typeof import('@simplewebauthn/server');

/** RP ID = BASE_URL's host name, origin = BASE_URL's origin (CONTRACT §10). */
export function relyingParty(ctx: ServiceContext) {
  const url = new URL(ctx.config.baseUrl);
  return { rpID: url.hostname, origin: ctx.config.baseOrigin, rpName: url.host };
}

/** The WebAuthn user handle: the user id's bytes (no email or name, W3C WebAuthn §14.6.1). */
export function userHandleOf(userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(userId, 'utf8'));
}

/** The challenge the browser signed, read from clientDataJSON; undefined when it is not readable. */
export function challengeOf(response: { response: { clientDataJSON: string } }): string | undefined {
  try {
    const data: unknown = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'));
    const challenge = (data as { challenge?: unknown })?.challenge;
    return typeof challenge === 'string' && challenge.length <= 512 ? challenge : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Verifies an assertion against a challenge issued for the same purpose (and user), burning the challenge, and
 * moves the credential's signature counter forward (a counter that does not grow means a cloned authenticator:
 * refused). Returns the passkey used, or undefined for anything that does not verify.
 */
export async function verifyPasskeyAssertion(
  ctx: ServiceContext,
  db: DbOrTrx,
  response: AuthenticationResponseJSON,
  expected: { userId: string | null },
): Promise<PasskeyRow | undefined> {
  const now = ctx.clock.now();
  const challenge = challengeOf(response);
  const purpose: ChallengePurpose = expected.userId ? 'mfa' : 'login';
  if (!challenge || !(await consumeChallenge(db, { challenge, purpose, userId: expected.userId, now }))) return undefined;
  const passkey = await findPasskeyByCredentialId(db, response.id);
  if (!passkey) return undefined;
  if (expected.userId && passkey.userId !== expected.userId) return undefined;
  // A discoverable credential names its account: it must be the one the credential was registered to.
  const userHandle = response.response.userHandle;
  if (userHandle && userHandle !== Buffer.from(userHandleOf(passkey.userId)).toString('base64url')) return undefined;
  const rp = relyingParty(ctx);
  const verification = await webauthn()
    .verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      credential: { id: passkey.credentialId, publicKey: passkey.publicKey, counter: passkey.counter, transports: passkey.transports },
      requireUserVerification: expected.userId === null,
    })
    .catch(() => undefined);
  if (!verification?.verified) return undefined;
  if (!(await recordPasskeyUse(db, passkey.id, verification.authenticationInfo.newCounter, now))) return undefined;
  return passkey;
}
