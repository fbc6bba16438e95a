import { renderToString } from 'preact-render-to-string';
import type { Brand } from '../config';
import { messagesFor } from '../i18n';
import { currentRequest } from '../lib/request-context';
import type { PageEnv } from '../middleware/page-env';
import type { ServiceContext } from '../services/context';

/**
 * The language and branding of a mail (CONTRACT §15): the language of the request that causes it (the person
 * registering, asking for a reset, changing a factor; for an invitation, the administrator's), English outside a
 * request (then default_locale); the branding of the settings in force (CONTRACT §18).
 */
export function mailEnv(ctx: Pick<ServiceContext, 'settings'>): PageEnv {
  const { values, brand } = ctx.settings.current;
  const locale = currentRequest()?.pageEnv?.locale ?? values.default_locale;
  return { locale, t: messagesFor(locale), brand };
}

/**
 * The HTML part of a notification email: the brand name (or logo), paragraphs of text, optionally one link drawn as
 * a button in the brand colour (white text on it passed the contrast check at start), and a footer; escaped by the
 * renderer.
 */
export function renderMailHtml(
  paragraphs: Array<string | { href: string; text: string }>,
  options: { brand: Readonly<Brand>; footer: string },
): string {
  const { brand } = options;
  return renderToString(
    <div style="font-family: system-ui, sans-serif; font-size: 16px; line-height: 1.5; color: #1f2328; max-width: 36rem">
      <p style="font-weight: 600; color: #57606a">
        {brand.logoUrl ? <img src={brand.logoUrl} alt={brand.name} height={32} /> : brand.name}
      </p>
      {paragraphs.map((p) =>
        typeof p === 'string' ? (
          <p>{p}</p>
        ) : (
          <p>
            <a
              href={p.href}
              style={`display: inline-block; padding: 10px 18px; border-radius: 8px; background: ${brand.color}; color: #ffffff; font-weight: 600; text-decoration: none`}
            >
              {p.text}
            </a>
          </p>
        ),
      )}
      <p style="color: #57606a; font-size: 14px">{options.footer}</p>
    </div>,
  );
}
