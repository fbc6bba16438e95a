import { z } from 'zod';
import { emailField, nameField, passwordField } from '../common.schemas';

export const registerBody = z
  .object({
    first_name: nameField('first_name'),
    last_name: nameField('last_name'),
    email: emailField,
    password: passwordField,
  })
  .transform((b) => ({ firstName: b.first_name, lastName: b.last_name, email: b.email, password: b.password }));

export const loginBody = z.object({
  email: emailField,
  // Not the full password rule: a wrong password of any length is just a wrong password (no 400 oracle).
  password: z.string({ error: 'password is required' }).min(1, 'password is required').max(1024),
});

export const updateMeBody = z
  .object({ first_name: nameField('first_name').optional(), last_name: nameField('last_name').optional() })
  .refine((b) => b.first_name !== undefined || b.last_name !== undefined, { message: 'Nothing to update' })
  .transform((b) => ({ firstName: b.first_name, lastName: b.last_name }));

export const refreshBody = z.object({ refreshToken: z.string().max(8192).optional() }).optional();

/** Who a user is, in every user object (auth.presenters presentIdentity). */
export const identityShape = {
  id: z.uuid(),
  email: z.string(),
  name: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  is_active: z.boolean(),
  email_verified: z.boolean(),
};

export const adminRoleField = z.enum(['super_admin', 'admin', 'manager', 'user']);

/** The user object of me, login and register (CONTRACT §4). */
export const authUser = z
  .strictObject({
    ...identityShape,
    roles: z.array(z.string()),
    permissions: z.array(z.string()),
    adminRole: adminRoleField,
    /** How the user signed in to this session (CONTRACT §10): in GET /me. */
    amr: z.array(z.enum(['pwd', 'otp', 'hwk', 'rec', 'fed'])).optional(),
  })
  .meta({ id: 'User' });

export const authUserEnvelope = z.strictObject({ user: authUser });

/** GET /me and /verify-admin: the whole user for first-party tokens, the scope-limited one for client tokens (CONTRACT §8). */
export const tokenUserEnvelope = z.strictObject({
  user: z.union([authUser, authUser.partial().required({ id: true, is_active: true }).meta({ id: 'ScopedUser' })]),
});

export const tokenPair = z.strictObject({ accessToken: z.string(), refreshToken: z.string() });

export const authResult = z.strictObject({ user: authUser, ...tokenPair.shape }).meta({ id: 'AuthResult' });

/** POST /login for an account with a second factor (CONTRACT §10): 401, no cookie, no session. */
export const mfaRequiredBody = z
  .strictObject({
    error: z.literal('mfa_required'),
    message: z.string(),
    mfa_token: z.string().meta({ description: 'For POST /api/auth/login/mfa; 5 minutes, dies after 5 wrong codes' }),
    methods: z.array(z.enum(['totp', 'passkey', 'recovery_code'])),
  })
  .meta({ id: 'MfaRequired' });
