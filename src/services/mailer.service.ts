import nodemailer from 'nodemailer';
import type { Logger } from '../lib/logger';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  /** Queues a message and returns at once: sending never blocks or fails the request that triggers it. */
  send(message: MailMessage): void;
  /** Resolves when every queued message has been attempted (tests, graceful shutdown). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * nodemailer over SMTP_URL; without it (development only, enforced by config) each mail is written to the log
 * so that a developer can follow its link.
 */
export function createMailer(options: { smtpUrl?: string; from: string; logger: Logger }): Mailer {
  const { smtpUrl, from, logger } = options;
  const transport = smtpUrl ? nodemailer.createTransport(smtpUrl) : undefined;
  const pending = new Set<Promise<void>>();

  const deliver = async (message: MailMessage): Promise<void> => {
    if (!transport) {
      logger.info({ mail: { to: message.to, subject: message.subject, text: message.text } }, 'mail (SMTP_URL unset, not sent)');
      return;
    }
    try {
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text, html: message.html });
    } catch (err) {
      logger.error({ err: { message: (err as Error).message }, subject: message.subject }, 'mail delivery failed');
    }
  };

  return {
    send(message) {
      const p = deliver(message).finally(() => pending.delete(p));
      pending.add(p);
    },
    async idle() {
      while (pending.size) await Promise.allSettled([...pending]);
    },
    async close() {
      await this.idle();
      transport?.close();
    },
  };
}
