import type { CookieOptions, Response } from 'express';
import type { ErrorDetail } from '../errors';
import type { FieldErrors, Refusal } from '../views/console/components';

/**
 * What travels with any answer besides its body: the cookies it sets or clears and its own headers. A page's outcome
 * and an API route's `Reply` (src/routes/route.ts) both carry them, and their one writer (`writeCookiesAndHeaders`)
 * puts them on the response: no handler writes a cookie to `res`.
 */
export abstract class Answer {
  /** The cookies this answer sets or clears, in order (a sign-in's session pair, a cleared pending link). */
  readonly cookies: CookieWrite[] = [];
  /** Response headers besides the kit's own (Retry-After of a refusal over a limit, a DPoP nonce). */
  readonly headers: Record<string, string> = {};

  /** This answer, also setting or clearing `cookies` (written by the last step, before the body). */
  withCookies(...cookies: ReadonlyArray<CookieWrite>): this {
    this.cookies.push(...cookies);
    return this;
  }

  /** This answer with `headers` too. */
  withHeaders(headers: Readonly<Record<string, string>> | undefined): this {
    Object.assign(this.headers, headers);
    return this;
  }
}

/**
 * What a page or console handler answers, instead of writing to `res`: a page, a redirect (with the message shown once
 * on the next page), or a refused form. The kit's last step (the route's `outcome` renderer, e.g. the console's in
 * src/console/action.ts) turns it into HTML with the frame, the CSRF pair, the language and the status. A body that is
 * neither JSON nor a page is a `Document` (below); only streams (a CSV export, the files of a directory) still write to
 * `res`.
 */
export abstract class Outcome extends Answer {
  protected constructor(readonly status: number) {
    super();
  }
}

/** A cookie an outcome sets (`value`) or clears (`value` undefined), with the options it was set with. */
export interface CookieWrite {
  readonly name: string;
  readonly value: string | undefined;
  readonly options: CookieOptions;
}

export const setCookie = (name: string, value: string, options: CookieOptions): CookieWrite => ({ name, value, options });
export const clearCookie = (name: string, options: CookieOptions): CookieWrite => ({ name, value: undefined, options });

/** `outcome` also setting or clearing `cookies`. */
export const withCookies = <O extends Outcome>(outcome: O, ...cookies: CookieWrite[]): O => outcome.withCookies(...cookies);

/** The first step of every answer's writer: its cookies and headers, before its status and body. */
export function writeCookiesAndHeaders(outcome: Answer, res: Response): void {
  for (const { name, value, options } of outcome.cookies) {
    if (value === undefined) res.clearCookie(name, options);
    else res.cookie(name, value, options);
  }
  res.set(outcome.headers);
}

/** A page: its view applied to the frame the kit builds (CSRF value, signed-in account, flash, errors). */
export class Page<F = never> extends Outcome {
  constructor(
    readonly render: (frame: F) => string,
    readonly title: string,
    status = 200,
    /** The errors of a refused form: the frame shows them in a summary at the top and the title says "Error". */
    readonly errors?: FieldErrors,
    /**
     * Where the page's forms may end besides this server, after the server's redirects (CSP form-action, issue 30):
     * URLs the route validated (a registered redirect URI, an SP's ACS URL). The kit turns them into CSP sources.
     */
    readonly formTargets?: readonly string[],
  ) {
    super(status);
  }
}

/** `view(frame, props)` as a page titled `title`. */
export function page<F, P>(view: (frame: F, props: P) => string, props: P, title: string, status = 200): Page<F> {
  return new Page<F>((frame) => view(frame, props), title, status);
}

/**
 * A 303 to `to` (post-redirect-get), with the result of the action shown once there. `status` 302 only for a plain
 * GET that moved (the base address to /login).
 */
export class Redirect extends Outcome {
  constructor(
    readonly to: string,
    readonly flash?: { kind: 'ok' | 'error'; message: Refusal },
    status: 302 | 303 = 303,
  ) {
    super(status);
  }
}

export const redirect = (to: string, ok?: string): Redirect => new Redirect(to, ok === undefined ? undefined : { kind: 'ok', message: ok });

/**
 * A refused form: the messages by field (in the page's language), the values as entered (never a password or a
 * secret: the form's own mapping leaves them out) and the status (400, or the service's 4xx). The kit renders it as
 * the form's page with an error summary.
 */
export class Invalid<V = unknown> extends Outcome {
  constructor(
    readonly errors: FieldErrors,
    readonly values: V,
    status = 400,
    /** The service's refusal details as sent (a bulk import's per-row report: row, email, message). */
    readonly details: readonly ErrorDetail[] = [],
  ) {
    super(status);
  }
}

/**
 * A document with its own media type, answered whole (not a stream): the SAML metadata (XML), the SCIM answers and
 * errors (`application/scim+json`), the API reference page and the same-origin scripts. The route adapter writes it
 * (`writeDocument`) for any handler that returns one; its cookies and headers (an ETag, a Location) go first.
 * `cacheControl`: the answer's Cache-Control; when undefined, a successful answer takes the route's declared one.
 */
export class Document extends Answer {
  constructor(
    readonly status: number,
    /** The media type; a string body is sent with `charset=utf-8` appended (as Express's `res.type().send()` does). */
    readonly mediaType: string,
    readonly body: string | Buffer,
    readonly cacheControl?: string,
  ) {
    super();
  }
}

/** `value` serialised as JSON under its own media type (SCIM's `application/scim+json`). */
export const jsonDocument = (status: number, mediaType: string, value: unknown): Document =>
  new Document(status, mediaType, JSON.stringify(value));

/**
 * Writes a document: its cookies and headers, its media type, its Cache-Control (or `declaredCacheControl`, the
 * route's, on a success), its status and body. A HEAD request gets the headers alone (Express leaves the body out).
 */
export function writeDocument(document: Document, res: Response, declaredCacheControl?: string): void {
  writeCookiesAndHeaders(document, res);
  res.type(document.mediaType);
  const cacheControl = document.cacheControl ?? (document.status < 400 ? declaredCacheControl : undefined);
  if (cacheControl !== undefined) res.set('Cache-Control', cacheControl);
  res.status(document.status).send(document.body);
}
