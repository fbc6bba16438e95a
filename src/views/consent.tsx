import { Actions, Hidden } from './kit';
import { renderPage } from './layout';

/** The consent screen (spec §4.3): who asks, for what, in plain words; Approve and Deny are plain form posts. */
export function renderConsentPage(options: {
  csrf: string;
  requestId: string;
  clientName: string;
  scopes: Array<{ scope: string; description: string }>;
  userEmail: string;
}): string {
  return renderPage(
    { title: `Allow ${options.clientName}?` },
    <>
      <h1>
        <span id="client-name">{options.clientName}</span> wants to access your account
      </h1>
      <p class="muted">Signed in as {options.userEmail}</p>
      <p id="scopes-heading">If you allow it, this app will be able to:</p>
      <ul class="scopes" aria-labelledby="scopes-heading">
        {options.scopes.map((s) => (
          <li>{s.description}</li>
        ))}
      </ul>
      <form method="post" action="/consent">
        <Hidden fields={{ csrf: options.csrf, request_id: options.requestId }} />
        <Actions>
          <button type="submit" name="decision" value="approve">
            Approve
          </button>{' '}
          <button type="submit" name="decision" value="deny" class="secondary">
            Deny
          </button>
        </Actions>
      </form>
      <p class="muted">
        You can remove this app's access at any time from your <a href="/account#apps">connected apps</a>.
      </p>
    </>,
  );
}

/** A small error page for the browser flow (bad authorize link, expired request, refused form). */
export function renderOAuthErrorPage(options: { title: string; message: string }): string {
  return renderPage(
    { title: options.title },
    <>
      <h1>{options.title}</h1>
      <p role="alert">{options.message}</p>
      <p class="muted">Go back to the app you came from and try again.</p>
    </>,
  );
}
