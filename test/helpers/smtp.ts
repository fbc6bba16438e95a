import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as the SMTP server received it, with its text part decoded. */
export interface CapturedMail {
  /** Envelope recipients (RCPT TO), lower-cased. */
  to: string[];
  subject: string;
  /** The decoded text/plain part (or the whole body for a single-part message). */
  text: string;
  raw: string;
}

export interface TestSmtpServer {
  /** smtp://127.0.0.1:<port>, for SMTP_URL. */
  url: string;
  mails: CapturedMail[];
  /** Mails sent to one address. */
  mailsTo(address: string): CapturedMail[];
  /**
   * Mails sent to one address once there are `count` of them, or as many as came within `timeoutMs` of wall-clock time
   * (a mail goes out after the answer; on a loaded machine that can take seconds): the caller asserts how many.
   */
  waitForMails(address: string, count?: number, timeoutMs?: number): Promise<CapturedMail[]>;
  close(): Promise<void>;
}

/** A real SMTP server on a free local port (no auth, no TLS) that keeps every message it receives. */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const mails: CapturedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', callback);
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const parsed = parseMessage(raw);
        mails.push({
          to: session.envelope.rcptTo.map((a) => a.address.toLowerCase()),
          subject: decodeEncodedWords(parsed.headers.subject ?? ''),
          text: parsed.text,
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  const mailsTo = (address: string) => mails.filter((m) => m.to.includes(address.toLowerCase()));
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    mailsTo,
    async waitForMails(address, count = 1, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (mailsTo(address).length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      return mailsTo(address);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** RFC 2047 encoded-words (a subject with non-ASCII text, e.g. German): `=?UTF-8?B?...?=` and `=?UTF-8?Q?...?=`. */
export function decodeEncodedWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_m, _charset: string, encoding: string, text: string) =>
      encoding.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
          ).toString('utf8'),
    );
}

/** The first link to `{baseUrl}{path}?token=…` in a mail's text, and its token. */
export function linkIn(mail: CapturedMail, path: '/verify-email' | '/set-password'): { url: string; token: string } {
  const match = new RegExp(`(https?://[^\\s"<>]+${path}\\?token=([A-Za-z0-9_%-]+))`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in mail "${mail.subject}":\n${mail.text}`);
  return { url: match[1]!, token: decodeURIComponent(match[2]!) };
}

interface ParsedPart {
  headers: Record<string, string>;
  text: string;
}

/** Just enough MIME for nodemailer's output: headers, multipart/alternative, base64 and quoted-printable. */
export function parseMessage(raw: string): ParsedPart {
  const normalized = raw.replace(/\r\n/g, '\n');
  const split = normalized.indexOf('\n\n');
  const headerBlock = split === -1 ? normalized : normalized.slice(0, split);
  const body = split === -1 ? '' : normalized.slice(split + 2);
  const headers: Record<string, string> = {};
  for (const line of headerBlock.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const contentType = headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (/^multipart\//i.test(contentType) && boundary) {
    const parts = body
      .split(`--${boundary}`)
      .slice(1)
      .filter((p) => !p.startsWith('--'))
      .map((p) => parseMessage(p.replace(/^\n/, '')));
    const plain = parts.find((p) => /^text\/plain/i.test(p.headers['content-type'] ?? 'text/plain')) ?? parts[0];
    return { headers, text: plain?.text ?? '' };
  }
  return { headers, text: decodeBody(body, headers['content-transfer-encoding']) };
}

function decodeBody(body: string, encoding = '7bit'): string {
  switch (encoding.toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable':
      return decodeQuotedPrintable(body);
    default:
      return body;
  }
}

/** RFC 2045 §6.7: `=` at a line end is a soft break; `=XX` is a byte. */
export function decodeQuotedPrintable(body: string): string {
  const joined = body.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const hex = joined[i] === '=' ? joined.slice(i + 1, i + 3) : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(joined[i]!, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
