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

/**
 * JSON lines, one per event (what log shippers read). With `pretty` and a terminal on stdout (`npm start` in
 * development) the same lines are rendered readable by pino-pretty, loaded only then.
 */
export function createLogger(level: string, options: { pretty?: boolean } = {}): Logger {
  const base = { level, redact: { paths: REDACT, remove: true }, base: undefined };
  if (options.pretty && process.stdout.isTTY) {
    const pretty = require('pino-pretty') as typeof import('pino-pretty');
    return pino(base, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true }));
  }
  return pino(base);
}
