import type { Transporter } from 'nodemailer';
import type { Logger } from '../lib/logger';
import type { SecurityEvent } from './events';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  /**
   * Queues a message and returns at once: sending never blocks or fails the request that triggers it. `recordFailure`
   * writes a failed delivery's `mail.send_failed` row instead of the mailer's own (the request's, with its origin:
   * `servingMailer`).
   */
  send(message: MailMessage, recordFailure?: (event: SecurityEvent) => Promise<void>): void;
  /** Resolves when every queued message has been attempted (tests, graceful shutdown). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** A hung SMTP server must not hold a queued mail (and graceful shutdown) forever. */
const SMTP_TIMEOUTS_MS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as const;

/**
 * nodemailer over SMTP_URL; without it (development only, enforced by config) each mail is written to the log
 * so that a developer can follow its link.
 */
export function createMailer(options: {
  /** The SMTP URL and sender in force when a mail goes out (CONTRACT §18: they change at runtime). */
  transport: () => { smtpUrl?: string; from: string };
  logger: Logger;
  /** Writes the `mail.send_failed` audit row. */
  recordFailure?: (event: SecurityEvent) => Promise<void>;
}): Mailer {
  const { logger, recordFailure } = options;
  // nodemailer is loaded with the first mail, not at start (issue 10); the transport then lives until the SMTP URL
  // changes (a new one is opened for the new URL, the old one closed) or the mailer closes.
  let transport: { url: string; transporter: Transporter } | undefined;
  const transportOf = (url: string): Transporter => {
    if (transport?.url === url) return transport.transporter;
    transport?.transporter.close();
    const transporter = (require('nodemailer') as typeof import('nodemailer')).createTransport({ url, ...SMTP_TIMEOUTS_MS });
    transport = { url, transporter };
    return transporter;
  };
  const pending = new Set<Promise<void>>();

  const deliver = async (message: MailMessage, record = recordFailure): Promise<void> => {
    const { smtpUrl, from } = options.transport();
    if (!smtpUrl) {
      logger.info({ mail: { to: message.to, subject: message.subject, text: message.text } }, 'mail (SMTP_URL unset, not sent)');
      return;
    }
    try {
      await transportOf(smtpUrl).sendMail({ from, to: message.to, subject: message.subject, text: message.text, html: message.html });
    } catch (err) {
      // The body carries link tokens and SMTP_URL may carry credentials: log neither, only what went wrong.
      logger.error(
        { err: describeMailError(err, smtpUrl), subject: message.subject, toDomain: domainOf(message.to) },
        'mail delivery failed',
      );
      // No transaction here (mail goes out after the change committed): the row is written directly.
      const event = { type: 'mail.send_failed', detail: { subject: message.subject, to_domain: domainOf(message.to) } } as const;
      await record?.(event).catch((failure: Error) => {
        logger.error({ err: { message: failure.message } }, 'audit trail write failed (mail.send_failed)');
      });
    }
  };

  return {
    send(message, record) {
      const p = deliver(message, record).finally(() => pending.delete(p));
      pending.add(p);
    },
    async idle() {
      while (pending.size) await Promise.allSettled([...pending]);
    },
    async close() {
      await this.idle();
      transport?.transporter.close();
    },
  };
}

function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at === -1 ? '' : address.slice(at + 1);
}

/** nodemailer error fields worth logging, with any URL userinfo or the configured password masked. */
/** The mailer of one request's service context (services/context.ts `forRequest`): a failed delivery is recorded with `record`. */
export function servingMailer(mailer: Mailer, record: (event: SecurityEvent) => Promise<void>): Mailer {
  return {
    send: (message) => mailer.send(message, record),
    idle: () => mailer.idle(),
    close: () => mailer.close(),
  };
}

export function describeMailError(err: unknown, smtpUrl?: string): Record<string, unknown> {
  const e = err as { message?: unknown; code?: unknown; responseCode?: unknown; command?: unknown };
  let message = typeof e?.message === 'string' ? e.message : String(err);
  message = message.replace(/(\w+:\/\/)[^@\s/]*@/g, '$1***@');
  const password = smtpPassword(smtpUrl);
  if (password) message = message.split(password).join('***');
  return {
    message,
    code: typeof e?.code === 'string' ? e.code : undefined,
    responseCode: typeof e?.responseCode === 'number' ? e.responseCode : undefined,
    command: typeof e?.command === 'string' ? e.command : undefined,
  };
}

function smtpPassword(smtpUrl?: string): string | undefined {
  if (!smtpUrl) return undefined;
  try {
    const url = new URL(smtpUrl);
    const password = decodeURIComponent(url.password);
    return password.length >= 3 ? password : undefined;
  } catch {
    return undefined;
  }
}
