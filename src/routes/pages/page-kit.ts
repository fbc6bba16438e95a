import type { Request, Response } from 'express';
import { z } from 'zod';
import { pageEnvOf } from '../../middleware/page-env';
import { allowFormTargets } from '../../middleware/security-headers';
import { renderOAuthErrorPage } from '../../views/consent';

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

/** Shared part of every page's declaration: HTML, never cached, not in the API description. */
export const PAGE = { noStore: true, document: false, tags: ['Pages'] } as const;

/** The refusal of a sign-in, consent or account form whose CSRF pair is missing or wrong (403 page). */
export const refuseForm = requireCsrf((req) =>
  renderOAuthErrorPage({ title: pageEnvOf(req).t.common.requestRefused, message: pageEnvOf(req).t.common.formExpired }),
);
