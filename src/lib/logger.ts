import pino, { Logger } from 'pino';

export type { Logger };

/** Paths that may carry credentials; they are removed from every log line. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.new_password',
  '*.current_password',
  '*.client_secret',
  '*.token',
  '*.refreshToken',
  '*.accessToken',
  '*.refresh_token',
  '*.access_token',
  '*.code',
  '*.code_verifier',
  '*.login_token',
];

export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT, remove: true }, base: undefined });
}
