import { Actions, Hidden } from './kit';
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
  return renderPage(
    { title: 'Sign out?' },
    <>
      <h1>Sign out?</h1>
      <p>
        {options.clientName ? (
          <>
            <strong>{options.clientName}</strong> asks
          </>
        ) : (
          'You are asked'
        )}{' '}
        to end your single sign-on session in this browser.
      </p>
      <p>
        Signed in as <strong>{options.userEmail}</strong>. Signing out here signs you out of every app that relies on this session.
      </p>
      <form method="post" action="/api/oauth/logout">
        <Hidden fields={{ csrf: options.csrf, confirm: 'yes' }} />
        <Hidden fields={options.params} />
        <Actions>
          <button type="submit">Sign out</button>
        </Actions>
      </form>
      <Actions class="muted">
        <a href="/login">Stay signed in</a>
      </Actions>
    </>,
  );
}
