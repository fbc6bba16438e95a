import * as OTPAuth from 'otpauth';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import type { TestApp } from './test-app';

/** The RFC 6238 code of `secret` at the app clock's current time (plus `stepOffset` 30-second steps). */
export function totpCode(t: TestApp, secret: string, stepOffset = 0): string {
  const totp = new OTPAuth.TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(secret) });
  return totp.generate({ timestamp: t.clock.now().getTime() + stepOffset * 30_000 });
}

/** Moves the clock to the next 30-second step, so that a fresh code is not a replay of the last one. */
export function nextStep(t: TestApp): void {
  t.clock.advance(30);
}

/** Sets up and confirms TOTP for the signed-in agent; returns the secret and the 10 recovery codes. */
export async function enrolTotp(t: TestApp, agent: TestAgent): Promise<{ secret: string; recoveryCodes: string[] }> {
  const setup = await agent.post('/api/auth/mfa/totp/setup');
  if (setup.status !== 200) throw new Error(`totp setup answered ${setup.status} ${JSON.stringify(setup.body)}`);
  const secret: string = setup.body.secret;
  const confirm = await agent.post('/api/auth/mfa/totp/confirm').send({ code: totpCode(t, secret) });
  if (confirm.status !== 200) throw new Error(`totp confirm answered ${confirm.status} ${JSON.stringify(confirm.body)}`);
  nextStep(t);
  return { secret, recoveryCodes: confirm.body.recovery_codes };
}

/** POST /api/auth/login expecting the mfa_required answer; returns its mfa_token. */
export async function passwordStep(t: TestApp, user: { email: string; password: string }): Promise<string> {
  const res = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password });
  if (res.status !== 401 || res.body.error !== 'mfa_required') throw new Error(`login answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.mfa_token;
}

/** Password + TOTP sign-in through the API; returns an agent carrying the session cookies and the tokens. */
export async function signInWithTotp(t: TestApp, user: { email: string; password: string }, secret: string) {
  const mfaToken = await passwordStep(t, user);
  const agent = request.agent(t.app);
  const res = await agent.post('/api/auth/login/mfa').send({ mfa_token: mfaToken, code: totpCode(t, secret) });
  if (res.status !== 200) throw new Error(`login/mfa answered ${res.status} ${JSON.stringify(res.body)}`);
  nextStep(t);
  return { agent, accessToken: res.body.accessToken as string, refreshToken: res.body.refreshToken as string, body: res.body };
}
