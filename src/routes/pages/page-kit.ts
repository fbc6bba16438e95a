import type { Request, Response } from 'express';
import { z } from 'zod';
import { Page, Redirect } from '../../http/outcome';
import { issueCsrf } from '../../middleware/csrf';
import { pageEnvOf } from '../../middleware/page-env';
import { allowFormTargets } from '../../middleware/security-headers';
import { renderOAuthErrorPage } from '../../views/consent';
import type { OutcomeRenderer } from '../route';

/**
 * What the server-rendered pages share: the HTML answer (with the places its forms may end at, CSP form-action), form
 * and query fields that never fail validation (a page answers bad input with a page, not a JSON error), and the CSRF
 * refusal for the route line's `csrf` option.
 */
export function html(res: Response, status: number, body: string, formTargets?: ReadonlyArray<string | undefined>): void {
  // Where this page's forms may end besides this server (CSP form-action, issue 30): only what the route validated.
  if (formTargets) allowFormTargets(res, formTargets);
  res.status(status).type('html').send(body);
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
  return (req, res) => html(res, 403, renderRefusal(req));
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
  if (outcome instanceof Redirect) return res.redirect(303, outcome.to);
  if (!(outcome instanceof HostedPage)) throw new Error(`${req.method} ${req.path}: not a page outcome`);
  let csrf: string | undefined;
  const frame: PageFrame = {
    get csrf() {
      return (csrf ??= issueCsrf(req, res, config));
    },
  };
  html(res, outcome.status, outcome.render(frame), outcome.formTargets);
};

/** Shared part of every page's declaration: HTML, never cached, not in the API description, outcomes rendered as pages. */
export const PAGE = { noStore: true, document: false, tags: ['Pages'], outcome: renderPageOutcome } as const;

/** The refusal of a sign-in, consent or account form whose CSRF pair is missing or wrong (403 page). */
export const refuseForm = requireCsrf((req) =>
  renderOAuthErrorPage({ title: pageEnvOf(req).t.common.requestRefused, message: pageEnvOf(req).t.common.formExpired }),
);
