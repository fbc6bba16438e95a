import { z } from 'zod';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { ReauthProof } from '../../services/mfa/reauthenticate.service';
import type { SecondFactorProof } from '../../services/mfa/sign-in.service';
import { sayIssue } from '../../i18n';
import { uuidField } from '../common.schemas';

const b64url = (field: string, max = 16384) =>
  z
    .string({ error: `${field} is required` })
    .max(max, `${field} is too long`)
    .regex(/^[A-Za-z0-9_-]*={0,2}$/, `${field} must be base64url`);

const codeField = z.string({ error: 'code is required' }).trim().min(1, 'code is required').max(16, 'code is too long');
const recoveryCodeField = z
  .string({ error: 'recovery_code is required' })
  .trim()
  .min(1, 'recovery_code is required')
  .max(64, 'recovery_code is too long');
const mfaTokenField = z.string({ error: 'mfa_token is required' }).min(1, 'mfa_token is required').max(512, 'mfa_token is too long');
const passwordProof = z.string({ error: 'password is required' }).min(1, 'password is required').max(1024);

/** A passkey's name: one line of at most 64 characters. */
export const passkeyNameField = z
  .string()
  .trim()
  .max(64, 'name must be at most 64 characters')
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'name must be one line without control characters');

const credentialBase = {
  id: b64url('id', 1024),
  rawId: b64url('rawId', 1024),
  type: z.literal('public-key', { error: 'type must be public-key' }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
};

/** The JSON form of a PublicKeyCredential from navigator.credentials.create() (WebAuthn Level 3 toJSON). */
export const registrationResponseField: z.ZodType<RegistrationResponseJSON> = z.object({
  ...credentialBase,
  response: z.looseObject({
    clientDataJSON: b64url('response.clientDataJSON'),
    attestationObject: b64url('response.attestationObject'),
    transports: z.array(z.string().max(32)).max(10).optional(),
  }),
});

/** The JSON form of a PublicKeyCredential from navigator.credentials.get(). */
export const authenticationResponseField: z.ZodType<AuthenticationResponseJSON> = z.object({
  ...credentialBase,
  response: z.looseObject({
    clientDataJSON: b64url('response.clientDataJSON'),
    authenticatorData: b64url('response.authenticatorData'),
    signature: b64url('response.signature'),
    userHandle: b64url('response.userHandle', 1024).optional(),
  }),
});

/**
 * CONTRACT §11: the proof of a signed-in caller, the same fields wherever a factor changes (docs/mfa.md
 * "Re-authentication"): the current `password`, a `code` of the account's authenticator app, a `recovery_code`, or a
 * `passkey` assertion made with options from POST /api/auth/passkeys/login/options. At most one.
 */
const proofShape = {
  password: passwordProof.optional(),
  code: codeField.optional(),
  recovery_code: recoveryCodeField.optional(),
  passkey: authenticationResponseField.optional(),
};
type ProofFields = { password?: string; code?: string; recovery_code?: string; passkey?: AuthenticationResponseJSON };
const PROOF_KEYS = ['password', 'code', 'recovery_code', 'passkey'] as const;
const proofCount = (b: ProofFields) => PROOF_KEYS.filter((k) => b[k] !== undefined).length;
/** The one proof sent (the schemas below allow at most one), or none. */
const toProof = (b: ProofFields): ReauthProof | undefined => {
  if (b.password !== undefined) return { method: 'password', password: b.password };
  if (b.code !== undefined) return { method: 'totp', code: b.code };
  if (b.recovery_code !== undefined) return { method: 'recovery_code', recoveryCode: b.recovery_code };
  if (b.passkey !== undefined) return { method: 'passkey', passkey: b.passkey };
  return undefined;
};
const AT_MOST_ONE = sayIssue('proofAtMostOne');
const EXACTLY_ONE = sayIssue('proofExactlyOne');

/** A factor change that needs a proof only when the sign-in is older than 10 minutes (body optional). */
export const optionalProofBody = z
  .object(proofShape)
  .refine((b) => proofCount(b) <= 1, AT_MOST_ONE)
  .transform((b) => ({ proof: toProof(b) }));

/** A factor change that always needs a proof (removing TOTP, new recovery codes: CONTRACT §10). */
export const requiredProofBody = z
  .object(proofShape)
  .refine((b) => proofCount(b) === 1, EXACTLY_ONE)
  .transform((b) => ({ proof: toProof(b) }));

/** `code` is the new app's first code; the proof, when needed, is one of the other three. */
export const totpConfirmBody = z
  .object({ ...proofShape, code: codeField })
  .refine((b) => proofCount({ ...b, code: undefined }) <= 1, sayIssue('proofAtMostOneBesidesCode'))
  .transform((b) => ({ code: b.code, proof: toProof({ ...b, code: undefined }) }));

export const totpRemoveBody = requiredProofBody;

export const recoveryCodesBody = requiredProofBody;

export const mfaLoginBody = z
  .object({
    mfa_token: mfaTokenField,
    code: codeField.optional(),
    recovery_code: recoveryCodeField.optional(),
    passkey: authenticationResponseField.optional(),
  })
  .refine((b) => [b.code, b.recovery_code, b.passkey].filter((v) => v !== undefined).length === 1, sayIssue('secondFactorExactlyOne'))
  .transform((b): { mfa_token: string } & SecondFactorProof => {
    if (b.code !== undefined) return { mfa_token: b.mfa_token, code: b.code };
    if (b.recovery_code !== undefined) return { mfa_token: b.mfa_token, recovery_code: b.recovery_code };
    if (b.passkey !== undefined) return { mfa_token: b.mfa_token, passkey: b.passkey };
    // The refinement above refuses a body without any proof.
    return z.NEVER;
  });

export const mfaTokenBody = z.object({ mfa_token: mfaTokenField });

export const passkeyRegisterBody = z
  .object({ ...proofShape, response: registrationResponseField, name: passkeyNameField.optional() })
  .refine((b) => proofCount(b) <= 1, AT_MOST_ONE)
  .transform((b) => ({ response: b.response, name: b.name, proof: toProof(b) }));

export const passkeyLoginBody = z.object({ response: authenticationResponseField });

/** A name a passkey is renamed to: the same rule, and not empty (the API and the /account form both use it). */
export const passkeyNewNameField = passkeyNameField.pipe(z.string().min(1, 'name is required'));

export const passkeyRenameBody = z.object({ name: passkeyNewNameField });

/** Malformed ids answer 404 like another user's passkey. */
export const passkeyIdParam = z.object({ id: uuidField('id') });

const passkeySummary = z.strictObject({
  id: z.uuid(),
  name: z.string(),
  created_at: z.iso.datetime(),
  last_used_at: z.iso.datetime().nullable(),
});

export const mfaStatusBody = z.strictObject({
  totp: z.boolean(),
  passkeys: z.array(passkeySummary),
  recovery_codes_left: z.number().int(),
});

export const totpSetupResponse = z.strictObject({ secret: z.string(), otpauth_url: z.string() });

export const recoveryCodesResponse = z.strictObject({ recovery_codes: z.array(z.string()).length(10) });

/** `recovery_codes` only when the passkey is the account's first factor (CONTRACT §11: shown once, like at TOTP confirm). */
export const passkeyCreatedBody = z.strictObject({
  passkey: z.strictObject({ id: z.uuid(), name: z.string(), created_at: z.iso.datetime() }),
  recovery_codes: z.array(z.string()).length(10).optional(),
});

export const passkeyEnvelope = z.strictObject({ passkey: passkeySummary });

/** WebAuthn options as @simplewebauthn/server makes them (PublicKeyCredentialCreation/RequestOptionsJSON). */
export const webauthnOptionsBody = z.looseObject({ challenge: z.string() });
