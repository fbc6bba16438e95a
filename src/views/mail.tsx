import { renderToString } from 'preact-render-to-string';

/** The HTML part of a notification email: paragraphs of text, optionally one link; escaped by the renderer. */
export function renderMailHtml(paragraphs: Array<string | { href: string; text: string }>): string {
  return renderToString(
    <>
      {paragraphs.map((p) =>
        typeof p === 'string' ? (
          <p>{p}</p>
        ) : (
          <p>
            <a href={p.href}>{p.text}</a>
          </p>
        ),
      )}
    </>,
  );
}
