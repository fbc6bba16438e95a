import { randomInt } from 'node:crypto';
import { withTransaction } from '../../db';
import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import {
  consumeDeviceCode,
  decideDeviceCode,
  findPendingDeviceCode,
  insertDeviceCode,
  recordDevicePoll,
  releaseDeviceCodeAttempt,
  takeDeviceCodeAttempt,
} from '../../db/repositories/oauth-device-codes.repo';
import { findSessionById } from '../../db/repositories/sessions.repo';
import { findUserById } from '../../db/repositories/users.repo';
import { findClientById } from '../../db/repositories/oauth-clients.repo';
import { OAuthError } from '../../errors';
import { addSeconds } from '../../lib/clock';
import { randomToken, sha256Hex } from '../../lib/crypto';
import type { RequestMeta, ServiceContext } from '../context';
import { hasAnyFactor, loadFactors } from '../mfa/factors.service';
import { hasSecondFactor } from '../mfa/policy';
import type { Principal } from '../principal';
import { DEVICE_CODE_GRANT, grantAllowed } from '../../declarations/client-policy';
import { judgeResource, permittedScopes, resolveResource } from './resource-resolver';
import { recordConsent } from './grant-record';
import { formatScope, isSubset, parseScope } from './scopes';
import { issueUserGrant, presentTokens, type TokenResponse } from './token-response';

/** CONTRACT §12: RFC 8628 §6.1's alphabet (no vowels, no look-alikes), 8 characters shown as XXXX-XXXX. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;
export const DEVICE_CODE_TTL_SECONDS = 600;
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
/** RFC 8628 §5.1: wrong user codes a browser session may enter per minute. */
export const WRONG_USER_CODES_PER_MINUTE = 5;

function drawUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** A user code as typed: any case, with or without the dash (or spaces); undefined when it cannot be one. */
export function normalizeUserCode(typed: string): string | undefined {
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== USER_CODE_LENGTH) return undefined;
  return [...code].every((c) => USER_CODE_ALPHABET.includes(c)) ? code : undefined;
}

export const formatUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** POST /api/oauth/device_authorization (RFC 8628 §3.1-3.2), after client authentication. */
export async function startDeviceAuthorization(
  ctx: ServiceContext,
  client: OAuthClientRow,
  input: { scope?: string; resource?: string },
): Promise<DeviceAuthorization> {
  if (!grantAllowed(client, DEVICE_CODE_GRANT))
    throw new OAuthError('unauthorized_client', 'This client is not registered for the device grant');
  const resource = await resolveResource(ctx, client, input.resource);
  const scopes = parseScope(input.scope ?? '');
  if (scopes.length === 0) throw new OAuthError('invalid_request', 'scope is required');
  if (!isSubset(scopes, permittedScopes(client, resource)))
    throw new OAuthError('invalid_scope', 'scope contains a value this client may not request');
  const now = ctx.clock.now();
  const deviceCode = randomToken(32);
  for (let attempt = 0; attempt < 5; attempt++) {
    const userCode = drawUserCode();
    const inserted = await insertDeviceCode(ctx.db, {
      deviceCodeHash: sha256Hex(deviceCode),
      userCodeHash: sha256Hex(userCode),
      clientId: client.clientId,
      scope: formatScope(scopes),
      resource: resource?.identifier ?? null,
      intervalSeconds: DEVICE_POLL_INTERVAL_SECONDS,
      now,
      expiresAt: addSeconds(now, DEVICE_CODE_TTL_SECONDS),
    });
    if (!inserted) continue;
    const verificationUri = `${ctx.config.baseUrl}/device`;
    return {
      device_code: deviceCode,
      user_code: formatUserCode(userCode),
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?${new URLSearchParams({ user_code: formatUserCode(userCode) })}`,
      expires_in: DEVICE_CODE_TTL_SECONDS,
      interval: DEVICE_POLL_INTERVAL_SECONDS,
    };
  }
  throw new OAuthError('temporarily_unavailable', 'Could not draw a free user code, try again');
}

/** What the /device page shows before the user answers. */
export interface DeviceRequestInfo {
  userCode: string;
  clientName: string;
  /** CONTRACT §13: the client registered itself; the page says no administrator reviewed it. */
  unreviewed: boolean;
  scopes: string[];
  /** CONTRACT §23: the API the tokens would be for, named on the page. */
  resources: Array<{ identifier: string; name: string }>;
}

export type UserCodeLookup = { ok: true; info: DeviceRequestInfo } | { ok: false; reason: 'not_found' | 'too_many' };

/**
 * The pending request a typed user code names, for the signed-in browser session `principal`. Every lookup spends one
 * of the session's WRONG_USER_CODES_PER_MINUTE attempts first; a code that is found gives it back, so only wrong codes
 * count and parallel guesses cannot pass the limit.
 */
export async function lookUpUserCode(ctx: ServiceContext, principal: Principal, typed: string): Promise<UserCodeLookup> {
  const found = await withAttempt(ctx, principal, typed, async (userCode) => {
    const row = await findPendingDeviceCode(ctx.db, sha256Hex(userCode), ctx.clock.now());
    const client = row ? await findClientById(ctx.db, row.clientId) : undefined;
    if (!row || !client?.isActive) return undefined;
    // The API named at device authorization, judged again (as consent does): one that has gone is not shown.
    const target = await judgeResource(ctx, client, { granted: row.resource });
    if (!target.ok) return undefined;
    const resource = target.resource;
    return {
      userCode: formatUserCode(userCode),
      clientName: client.name,
      unreviewed: client.registration === 'dynamic',
      scopes: parseScope(row.scope),
      resources: resource ? [{ identifier: resource.identifier, name: resource.name }] : [],
    };
  });
  return found;
}

/** The user approves or denies (one conditional UPDATE: a code is answered once). */
export async function decideUserCode(
  ctx: ServiceContext,
  principal: Principal,
  typed: string,
  approve: boolean,
): Promise<{ ok: true; clientName: string } | { ok: false; reason: 'not_found' | 'too_many' }> {
  const result = await withAttempt(ctx, principal, typed, async (userCode) => {
    const now = ctx.clock.now();
    // OIDC Core: auth_time is when the person signed in (the browser session's), not when they approved.
    const authTime = (await findSessionById(ctx.db, principal.sessionId))?.authTime ?? now;
    return withTransaction(ctx.db, async (trx) => {
      const decision = { approve, userId: principal.userId, authTime, amr: principal.amr };
      const row = await decideDeviceCode(trx, sha256Hex(userCode), decision, now);
      if (!row) return undefined;
      const client = await findClientById(trx, row.clientId);
      if (!client?.isActive) throw new DeviceCodeGone();
      // The API the page named must still be one the client may ask for (the resolver, as consent judges it).
      if (!(await judgeResource(ctx, client, { granted: row.resource }, { db: trx })).ok) throw new DeviceCodeGone();
      if (approve) {
        // CONTRACT §23: the grant records the API named on the /device page (no redirect URI in this grant).
        await recordConsent(trx, principal.userId, client.clientId, { scopes: parseScope(row.scope), resource: row.resource }, now);
      }
      return { clientName: client.name, clientId: client.clientId };
    }).catch((err) => {
      if (err instanceof DeviceCodeGone) return undefined;
      throw err;
    });
  });
  if (!result.ok) return result;
  const { clientId, clientName } = result.info;
  await ctx.events.record(ctx.db, {
    type: approve ? 'oauth.device.approved' : 'oauth.device.denied',
    actorId: principal.userId,
    subjectId: principal.userId,
    clientId,
  });
  return { ok: true, clientName };
}

class DeviceCodeGone extends Error {}

async function withAttempt<T>(
  ctx: ServiceContext,
  principal: Principal,
  typed: string,
  find: (userCode: string) => Promise<T | undefined>,
): Promise<{ ok: true; info: T } | { ok: false; reason: 'not_found' | 'too_many' }> {
  const allowed = await takeDeviceCodeAttempt(ctx.db, principal.sessionId, ctx.clock.now(), WRONG_USER_CODES_PER_MINUTE, 60);
  if (!allowed) return { ok: false, reason: 'too_many' };
  const userCode = normalizeUserCode(typed);
  const found = userCode ? await find(userCode) : undefined;
  if (found === undefined) return { ok: false, reason: 'not_found' };
  await releaseDeviceCodeAttempt(ctx.db, principal.sessionId);
  return { ok: true, info: found };
}

/**
 * grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 §3.4-3.5): authorization_pending until the user
 * answers, slow_down when polled sooner than the interval (which then grows by 5 s), access_denied, expired_token,
 * then the tokens exactly once (the consuming UPDATE is conditional); afterwards, and for another client, invalid_grant.
 */
export async function exchangeDeviceCode(
  ctx: ServiceContext,
  client: OAuthClientRow,
  input: { deviceCode: string; dpopJkt?: string },
  meta: RequestMeta,
): Promise<TokenResponse> {
  const now = ctx.clock.now();
  const hash = sha256Hex(input.deviceCode);
  const polled = await recordDevicePoll(ctx.db, hash, client.clientId, now);
  const invalid = () => new OAuthError('invalid_grant', 'device_code is invalid or was already used');
  if (!polled || polled.status === 'consumed') throw invalid();
  if (polled.expiresAt <= now) throw new OAuthError('expired_token', 'The device code has expired: start again');
  if (polled.status === 'denied') throw new OAuthError('access_denied', 'The user denied the request');
  if (polled.status === 'pending') {
    if (polled.slowDown) throw new OAuthError('slow_down', `Polled too fast: wait at least ${polled.intervalSeconds} s between requests`);
    throw new OAuthError('authorization_pending', 'The user has not answered yet');
  }
  const issued = await withTransaction(ctx.db, async (trx) => {
    const user = polled.userId ? await findUserById(trx, polled.userId) : undefined;
    if (!user?.isActive) return undefined;
    const target = await judgeResource(ctx, client, { granted: polled.resource }, { db: trx });
    if (!target.ok) return undefined;
    const resource = target.resource;
    const { tokens, expiresIn, idToken, scope } = await issueUserGrant(
      ctx,
      trx,
      { client, user, context: polled, resource, meta, dpopJkt: input.dpopJkt },
      async (sessionId) => {
        // Another poll consumed it first: roll this session back (exactly once).
        if (!(await consumeDeviceCode(trx, hash, client.clientId, sessionId, now))) throw new DeviceCodeGone();
      },
    );
    return { tokens, expiresIn, idToken, userId: user.id, scope };
  }).catch((err) => {
    if (err instanceof DeviceCodeGone) return undefined;
    throw err;
  });
  if (!issued) throw invalid();
  await ctx.events.record(ctx.db, {
    type: 'oauth.token.issued',
    actorId: issued.userId,
    subjectId: issued.userId,
    clientId: client.clientId,
    detail: { grant_type: DEVICE_CODE_GRANT, session_id: issued.tokens.sessionId, scope: issued.scope },
  });
  return presentTokens(ctx, issued.tokens, issued.scope, issued.idToken, issued.expiresIn);
}

/**
 * CONTRACT §12: /device asks for the second factor where the account has one. A browser session opened without one
 * (a factor added since, for instance) signs in again first.
 */
export async function deviceNeedsSecondFactor(ctx: ServiceContext, principal: Principal): Promise<boolean> {
  if (hasSecondFactor(principal.amr)) return false;
  return hasAnyFactor(await loadFactors(ctx.db, principal.userId));
}
