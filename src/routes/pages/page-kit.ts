import type { Request, Response } from 'express';
import { z } from 'zod';
import { Page, Redirect, writeCookiesAndHeaders } from '../../http/outcome';
import { CSRF_COOKIE, issueCsrf } from '../../middleware/csrf';
import { pageEnvOf } from '../../middleware/page-env';
import { allowFormTargets } from '../../middleware/security-headers';
import { renderOAuthErrorPage } from '../../views/consent';
import type { OutcomeRenderer } from '../route';

/**
 * What the server-rendered pages share: the last step that writes a page outcome (with the places its forms may end
 * at, CSP form-action), form and query fields that never fail validation (a page answers bad input with a page, not a
 * JSON error), and the CSRF refusal for the route line's `csrf` option. A handler never writes HTML itself: it returns
 * an outcome (test/unit/handlers-return-answers.test.ts refuses a route handler that takes `res`).
 */

/**
 * Writes a page outcome: its cookies and headers, then its view of the frame (made when the page is written, after the
 * outcome's cookies) as HTML with its status. Where its forms may end besides this server (CSP form-action, issue 30):
 * only what the route validated. The last step of both HTML faces and their error boundaries; never a handler.
 */
export function writePage<F>(outcome: Page<F>, res: Response, frame: () => F): void {
  writeCookiesAndHeaders(outcome, res);
  const body = outcome.render(frame());
  if (outcome.formTargets) allowFormTargets(res, outcome.formTargets);
  res.status(outcome.status).type('html').send(body);
}

/** A form or query field as sent when it is one string, else undefined; cut at `max` characters when given. */
const asText = (max: number | undefined) => (v: unknown) => (typeof v === 'string' ? (max === undefined ? v : v.slice(0, max)) : undefined);

export const optionalText = (max?: number) => z.unknown().transform(asText(max)).optional();

/** A form or query field as sent when it is one string, else ''. */
export const text = (max?: number) =>
  z
    .unknown()
    .transform((v) => asText(max)(v) ?? '')
    .default('');

/** `csrf: requireCsrf(renderRefusal)` on a form post's route line: a missing or wrong pair answers 403 with that page. */
export function requireCsrf(renderRefusal: (req: Request) => string): (req: Request, res: Response) => void {
  return (req, res) =>
    sendHostedPage(
      hostedPage(() => renderRefusal(req), 403),
      res,
    );
}

/** What a hosted page is drawn with: the CSRF value of its forms, issued when first read (a page without a form sets no cookie). */
export interface PageFrame {
  readonly csrf: string;
}

/** A hosted page (sign-in, device, setup…): its view of the frame, its status, where its forms may end (CSP). */
export class HostedPage extends Page<PageFrame> {}

export const hostedPage = (render: (frame: PageFrame) => string, status = 200, formTargets?: readonly string[]): HostedPage =>
  new HostedPage(render, '', status, undefined, formTargets);

/**
 * The pages' last step (the kit's renderer of a page handler's outcome): a page with the CSRF pair it reads, or a 303
 * (post-redirect-get). The title, language and error summary are the view's frame (src/views/layout.tsx).
 */
export const renderPageOutcome: OutcomeRenderer = (outcome, req, res, config) => {
  if (outcome instanceof Redirect) {
    writeCookiesAndHeaders(outcome, res);
    return res.redirect(outcome.status, outcome.to);
  }
  if (!(outcome instanceof HostedPage)) throw new Error(`${req.method} ${req.path}: not a page outcome`);
  // A page answering a sign-in (the CSRF value rotated among its cookies) draws its forms with the new value.
  const rotated = outcome.cookies.filter((c) => c.name === CSRF_COOKIE).at(-1)?.value;
  let csrf: string | undefined;
  const frame: PageFrame = {
    get csrf() {
      return (csrf ??= rotated ?? issueCsrf(req, res, config));
    },
  };
  writePage(outcome, res, () => frame);
};

/** The frame of a page without a form (a refusal). */
const noFormHere: PageFrame = {
  get csrf(): string {
    throw new Error('this page has no form');
  },
};

/** A hosted page written outside a route's last step (the pages' error boundary, a CSRF refusal). */
export const sendHostedPage = (outcome: HostedPage, res: Response): void => writePage(outcome, res, () => noFormHere);

/** Shared part of every page's declaration: HTML, never cached, not in the API description, outcomes rendered as pages. */
export const PAGE = { noStore: true, document: false, tags: ['Pages'], outcome: renderPageOutcome } as const;

/** The refusal of a sign-in, consent or account form whose CSRF pair is missing or wrong (403 page). */
export const refuseForm = requireCsrf((req) =>
  renderOAuthErrorPage({ title: pageEnvOf(req).t.common.requestRefused, message: pageEnvOf(req).t.common.formExpired }),
);
