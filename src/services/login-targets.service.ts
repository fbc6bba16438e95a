import { consumeLoginToken, insertLoginToken } from '../db/repositories/login-tokens.repo';
import { AppError, InvalidLinkError } from '../errors';
import { addSeconds } from '../lib/clock';
import { randomToken, sha256Hex } from '../lib/crypto';
import { isAllowListedUrl, resolveLoginTarget, type LoginApps, type LoginTargetInput } from '../lib/login-target';
import type { ServiceContext } from './context';

function loginAppsOf(ctx: ServiceContext): LoginApps {
  return { apps: ctx.config.loginApps, defaultApp: ctx.config.defaultLoginApp };
}

/** GET /api/auth/login-target: an allow-listed URL, or 400 invalid_target (CONTRACT §4). */
export function resolveTarget(ctx: ServiceContext, input: LoginTargetInput): string {
  const result = resolveLoginTarget(input, loginAppsOf(ctx));
  if (!result.ok) throw new AppError('invalid_target', `Invalid post-login destination: ${result.reason}`);
  return result.url;
}

/**
 * POST /api/auth/login-request (spec §2.8): a 256-bit single-use token bound to the resolved destination, stored
 * as its SHA-256, valid config.loginTokenTtlSeconds.
 */
export async function createLoginRequest(ctx: ServiceContext, input: LoginTargetInput): Promise<{ loginToken: string; expiresIn: number }> {
  const url = resolveTarget(ctx, input);
  const loginToken = randomToken(32);
  const now = ctx.clock.now();
  const ttl = ctx.config.loginTokenTtlSeconds;
  await insertLoginToken(ctx.db, { tokenHash: sha256Hex(loginToken), url, now, expiresAt: addSeconds(now, ttl) });
  return { loginToken, expiresIn: ttl };
}

/**
 * POST /api/auth/login-resolve (spec §3: login token -> burned): one conditional UPDATE, so exactly one of N
 * concurrent resolves gets the URL. The stored URL is checked again against the current allow-list.
 */
export async function resolveLoginRequest(ctx: ServiceContext, loginToken: string): Promise<string> {
  const url = await consumeLoginToken(ctx.db, sha256Hex(loginToken), ctx.clock.now());
  if (!url) throw new InvalidLinkError('Invalid, expired or already used login token');
  if (!isAllowListedUrl(url, loginAppsOf(ctx))) throw new AppError('invalid_target', 'The destination is no longer allowed');
  return url;
}
