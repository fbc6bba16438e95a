import pino, { Logger } from 'pino';

export type { Logger };

/** Paths that may carry credentials; they are removed from every log line. */
export const LOG_REDACT_PATHS = [
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
  '*.registration_access_token',
  '*.initial_access_token',
  '*.secret',
];

/**
 * JSON lines, one per event (what log shippers read). With `pretty` and a terminal on stdout (`npm start` in
 * development) the same lines are rendered readable by pino-pretty, loaded only then.
 *
 * Written asynchronously and in batches (issues 10 and 33): lines are collected until LOG_BATCH_BYTES are pending or
 * LOG_FLUSH_INTERVAL_MS have passed, then go out in one write, so a busy server makes one write per few dozen lines
 * rather than one per line (each write was about a tenth of a `/api/auth/me` request's CPU), and a quiet server's
 * line appears within LOG_FLUSH_INTERVAL_MS. pino writes what is pending, synchronously, when the process exits
 * (the graceful stop ends with process.exit, so no line of a drained request is lost), on process.exit and on an
 * uncaught exception; a process killed outright (SIGKILL, out of memory, a native crash) can lose the lines of the
 * last LOG_FLUSH_INTERVAL_MS. If stdout stops draining, at most
 * LOG_BUFFER_MAX_BYTES wait in memory and later lines are dropped (and counted in a warning once it drains) rather
 * than growing the heap without bound.
 */
export function createLogger(level: string, options: { pretty?: boolean } = {}): Logger {
  const base = { level, redact: { paths: LOG_REDACT_PATHS, remove: true }, base: undefined };
  if (options.pretty && process.stdout.isTTY) {
    const pretty: typeof import('pino-pretty') = require('pino-pretty');
    const stream = pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true });
    const logger = pino(base, stream);
    streams.set(logger, stream);
    return logger;
  }
  const destination = pino.destination({
    dest: 1,
    sync: false,
    minLength: LOG_BATCH_BYTES,
    periodicFlush: LOG_FLUSH_INTERVAL_MS,
    maxLength: LOG_BUFFER_MAX_BYTES,
  });
  const logger = pino(base, destination);
  streams.set(logger, destination);
  let dropped = 0;
  destination.on('drop', () => {
    if (dropped++ === 0) {
      // Reported once stdout drains again (a line written now would be dropped too).
      destination.once('drain', () => {
        logger.warn({ droppedLines: dropped }, 'log lines dropped: stdout did not keep up');
        dropped = 0;
      });
    }
  });
  return logger;
}

/** The stream each logger of createLogger writes to, for the access log's logger on the same stream. */
const streams = new WeakMap<Logger, pino.DestinationStream>();

/**
 * A logger on the same stream as `logger` without its redaction (which walks every object logged), for lines whose
 * fields are fixed by the caller and never carry a credential (the access log). Its level is `trace`: the caller
 * asks `logger.isLevelEnabled` first. A logger not made by createLogger (a test's) is returned as it is.
 */
export function createUnredactedLogger(logger: Logger): Logger {
  const stream = streams.get(logger);
  return stream ? pino({ level: 'trace', base: undefined }, stream) : logger;
}

/** Log output is written once this much is pending (about 25 access-log lines)... */
const LOG_BATCH_BYTES = 4096;
/** ...or at the latest this long after the previous write: a line appears within this bound. */
const LOG_FLUSH_INTERVAL_MS = 200;

/** At most this much log output waits for a stalled stdout before lines are dropped. */
const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;
