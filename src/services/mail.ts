import { messagesFor, type Locale, type PageEnv } from '../i18n';
import type { Brand } from '../lib/palette';
import type { LiveSettings } from './settings/live-settings';

/** One paragraph of a notification mail: text, or one link drawn as a button. */
export type MailParagraph = string | { href: string; text: string };

/**
 * The port through which services render the HTML part of a mail: services say what a mail says, the views draw it
 * (src/views/mail-html.tsx implements it; src/create-context.ts puts it in the service context as `mailHtml`), so no
 * service imports a view.
 */
export type MailHtmlRenderer = (paragraphs: MailParagraph[], options: { brand: Readonly<Brand>; footer: string }) => string;

/**
 * The language and branding of a mail (CONTRACT §15): the language of the request that causes it (the person
 * registering, asking for a reset, changing a factor; for an invitation, the administrator's), English outside a
 * request (then default_locale); the branding of the settings in force (CONTRACT §18).
 */
export function mailEnv(ctx: { settings: Pick<LiveSettings, 'current'>; request?: { locale(): Locale | undefined } }): PageEnv {
  const { values, brand } = ctx.settings.current;
  const locale = ctx.request?.locale() ?? values.default_locale;
  return { locale, t: messagesFor(locale), brand };
}
