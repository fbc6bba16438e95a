import { pageEnv } from './env';
import { Actions, ButtonPost, Hidden } from './kit';
import { renderPage } from './layout';

/**
 * RP-Initiated Logout confirmation (CONTRACT §9): shown when the request cannot be tied to the signed-in user, so
 * that a link on another site cannot end the session unasked. The request's parameters ride along as hidden
 * fields and are checked again when the form is posted.
 */
export function renderLogoutConfirmPage(options: {
  csrf: string;
  userEmail: string;
  clientName?: string;
  params: Record<string, string | undefined>;
}): string {
  const { t } = pageEnv();
  return renderPage(
    { title: t.logout.title },
    <>
      <h1>{t.logout.title}</h1>
      <p>{options.clientName ? t.logout.asks(options.clientName) : t.logout.asked}</p>
      <p>
        {t.logout.signedInAs} <strong>{options.userEmail}</strong>. {t.logout.everyApp}
      </p>
      <ButtonPost action="/api/oauth/logout" fields={{ csrf: options.csrf, confirm: 'yes' }} label={t.logout.submit}>
        <Hidden fields={options.params} />
      </ButtonPost>
      <Actions class="muted">
        <a href="/login">{t.logout.stay}</a>
      </Actions>
    </>,
  );
}
