import { randomUUID } from 'node:crypto';
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { withTransaction } from '../../db';
import { isUniqueViolation } from '../../db/pg-errors';
import { deleteRecoveryCodes } from '../../db/repositories/mfa-recovery-codes.repo';
import { addSessionAmr } from '../../db/repositories/sessions.repo';
import { consumeChallenge, insertChallenge, type ChallengePurpose } from '../../db/repositories/webauthn-challenges.repo';
import {
  deletePasskey,
  insertPasskey,
  listPasskeysOfUser,
  renamePasskey,
  type PasskeyRow,
} from '../../db/repositories/webauthn-credentials.repo';
import { AppError, conflict, found, notFound } from '../../errors';
import { addSeconds } from '../../lib/clock';
import type { RequestMeta, ServiceContext } from '../context';
import { fullName, type Principal } from '../principal';
import { assertMayManageFactors, hasAnyFactor, loadFactors, recordFactorEvent } from './factors.service';
import { mailFactorAdded, mailFactorRemoved } from './notifications';
import { AMR } from './policy';
import { requireFactorChangeAllowed, type ReauthProof } from './reauthenticate.service';
import { issueRecoveryCodes } from './recovery-codes.service';
import { challengeOf, relyingParty, userHandleOf, webauthn } from './factor-checks';

/** WebAuthn challenges are single use and live this long (also the ceremony timeout the browser gets). */
export const CHALLENGE_TTL_SECONDS = 300;
const DEFAULT_NAME = 'Passkey';

async function storeChallenge(ctx: ServiceContext, challenge: string, purpose: ChallengePurpose, userId: string | null): Promise<void> {
  const now = ctx.clock.now();
  await insertChallenge(ctx.db, { challenge, purpose, userId, now, expiresAt: addSeconds(now, CHALLENGE_TTL_SECONDS) });
}

export function presentPasskeyName(name: string | undefined): string {
  const trimmed = name?.trim();
  return trimmed ? trimmed : DEFAULT_NAME;
}

/**
 * POST /api/auth/passkeys/register/options: creation options for a discoverable credential of the caller. Needs a
 * recent sign-in or a proof in the request (CONTRACT §11); a proof also makes the sign-in recent for the register
 * call that follows.
 */
export async function passkeyRegistrationOptions(
  ctx: ServiceContext,
  principal: Principal,
  proof?: ReauthProof,
  meta?: RequestMeta,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const factors = await loadFactors(ctx.db, principal.userId);
  await requireFactorChangeAllowed(ctx, principal, proof, factors, { meta });
  const rp = relyingParty(ctx);
  const options = await webauthn().generateRegistrationOptions({
    rpName: rp.rpName,
    rpID: rp.rpID,
    userName: principal.email,
    userDisplayName: fullName(principal.firstName, principal.lastName) || principal.email,
    userID: userHandleOf(principal.userId),
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: factors.passkeys.map((p) => ({ id: p.credentialId, transports: p.transports })),
    // Discoverable, so that it also signs in without an email (CONTRACT §10).
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  });
  await storeChallenge(ctx, options.challenge, 'register', principal.userId);
  return options;
}

/**
 * POST /api/auth/passkeys/register { response, name? }: verifies the attestation against a challenge this user was
 * given (burnt here, once) and stores the credential. Creating it counts as proof of the factor for this session.
 * Needs a recent sign-in or a proof (CONTRACT §11). The account's first factor comes with its recovery codes
 * (`recoveryCodes`, shown once), whichever kind it is.
 */
export async function registerPasskey(
  ctx: ServiceContext,
  principal: Principal,
  input: { response: RegistrationResponseJSON; name?: string },
  proof?: ReauthProof,
  meta?: RequestMeta,
): Promise<{ passkey: PasskeyRow; recoveryCodes?: string[] }> {
  const factors = await loadFactors(ctx.db, principal.userId);
  await requireFactorChangeAllowed(ctx, principal, proof, factors, { meta });
  const challenge = challengeOf(input.response);
  const now = ctx.clock.now();
  const rejected = () => new AppError('validation_error', 'The passkey could not be verified; start again');
  if (!challenge || !(await consumeChallenge(ctx.db, { challenge, purpose: 'register', userId: principal.userId, now }))) throw rejected();
  const rp = relyingParty(ctx);
  const verification = await webauthn()
    .verifyRegistrationResponse({
      response: input.response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      requireUserVerification: false,
    })
    .catch(() => undefined);
  if (!verification?.verified) throw rejected();
  const { credential, credentialBackedUp } = verification.registrationInfo;
  let created: { passkey: PasskeyRow; recoveryCodes?: string[] };
  try {
    created = await withTransaction(ctx.db, async (trx) => {
      const row = await insertPasskey(trx, {
        id: randomUUID(),
        userId: principal.userId,
        credentialId: credential.id,
        publicKey: credential.publicKey,
        counter: credential.counter,
        transports: credential.transports ?? input.response.response.transports ?? [],
        name: presentPasskeyName(input.name),
        backedUp: credentialBackedUp,
        now,
      });
      await addSessionAmr(trx, principal.sessionId, AMR.passkey);
      // Read again inside the transaction: of two first factors enrolled at once, each issues codes and the later wins.
      const first = !hasAnyFactor(await loadFactors(trx, principal.userId, { except: row.id }));
      const recoveryCodes = first ? await issueRecoveryCodes(ctx, trx, principal.userId) : undefined;
      await recordFactorEvent(ctx, trx, 'mfa.factor.added', principal.userId, { factor: 'passkey', passkey_id: row.id }, meta);
      return { passkey: row, recoveryCodes };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('This passkey is already registered');
    throw err;
  }
  mailFactorAdded(ctx, { email: principal.email, firstName: principal.firstName }, { kind: 'passkey', name: created.passkey.name });
  return created;
}

export async function listPasskeys(ctx: ServiceContext, principal: Principal): Promise<PasskeyRow[]> {
  return listPasskeysOfUser(ctx.db, principal.userId);
}

/** PATCH /api/auth/passkeys/:id: renamed and audited (`mfa.factor.renamed`) in one transaction. */
export async function renameOwnPasskey(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  name: string,
  meta?: RequestMeta,
): Promise<PasskeyRow> {
  assertMayManageFactors(principal, await loadFactors(ctx.db, principal.userId));
  return withTransaction(ctx.db, async (trx) => {
    const row = found(await renamePasskey(trx, principal.userId, id, presentPasskeyName(name)), 'Passkey');
    // The new name only: a name is the user's own label, not a secret, and the old one is in the previous event.
    await recordFactorEvent(
      ctx,
      trx,
      'mfa.factor.renamed',
      principal.userId,
      { factor: 'passkey', passkey_id: row.id, name: row.name },
      meta,
    );
    return row;
  });
}

/**
 * DELETE /api/auth/passkeys/:id, with a recent sign-in or a proof (CONTRACT §11). Without any factor left, the
 * recovery codes go too.
 */
export async function removePasskey(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  proof?: ReauthProof,
  meta?: RequestMeta,
): Promise<void> {
  const factors = await loadFactors(ctx.db, principal.userId);
  if (!factors.passkeys.some((p) => p.id === id)) throw notFound('Passkey');
  await requireFactorChangeAllowed(ctx, principal, proof, factors, { meta });
  const removed = await withTransaction(ctx.db, async (trx) => {
    const row = found(await deletePasskey(trx, principal.userId, id), 'Passkey');
    if (!hasAnyFactor(await loadFactors(trx, principal.userId))) await deleteRecoveryCodes(trx, principal.userId);
    await recordFactorEvent(ctx, trx, 'mfa.factor.removed', principal.userId, { factor: 'passkey', passkey_id: row.id }, meta);
    return row;
  });
  mailFactorRemoved(ctx, { email: principal.email, firstName: principal.firstName }, { kind: 'passkey', name: removed.name });
}

/**
 * Request options for an assertion. `userId` null: password-less sign-in with a discoverable credential (any
 * account, user verification required); else the second step for that user's passkeys.
 */
export async function passkeyAssertionOptions(ctx: ServiceContext, userId: string | null): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const passkeys = userId ? await listPasskeysOfUser(ctx.db, userId) : [];
  const options = await webauthn().generateAuthenticationOptions({
    rpID: relyingParty(ctx).rpID,
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    userVerification: userId ? 'preferred' : 'required',
    allowCredentials: passkeys.map((p) => ({ id: p.credentialId, transports: p.transports })),
  });
  await storeChallenge(ctx, options.challenge, userId ? 'mfa' : 'login', userId);
  return options;
}
