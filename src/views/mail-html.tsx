import { renderToString } from 'preact-render-to-string';
import type { Brand } from '../lib/palette';

/**
 * The HTML part of a notification email: the brand name (or logo), paragraphs of text, optionally one link drawn as
 * a button in the brand colour (white text on it passed the contrast check at start), and a footer; escaped by the
 * renderer. The services' mail port (services/mail.ts `MailHtmlRenderer`), given to them in the service context.
 */
export function renderMailHtml(
  paragraphs: ReadonlyArray<string | { href: string; text: string }>,
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
