import { pageEnv } from './env';
import { renderPage } from './layout';

/**
 * SAML HTTP-POST binding (CONTRACT §19): a form that carries SAMLResponse (or SAMLRequest) and RelayState to the
 * application's registered URL. /static/saml-post.js submits it (the CSP allows same-origin scripts only); without
 * scripts the person presses Continue.
 */
export function renderSamlPostPage(options: {
  action: string;
  field: 'SAMLResponse' | 'SAMLRequest';
  message: string;
  relayState?: string;
  appName?: string;
}): string {
  const { t } = pageEnv();
  const title = options.appName === undefined ? t.samlPost.signedOutTitle : t.samlPost.title(options.appName);
  return renderPage(
    { title, scripts: ['/static/saml-post.js'] },
    <>
      <h1>{title}</h1>
      <form method="post" action={options.action} id="saml-post">
        <input type="hidden" name={options.field} value={options.message} />
        {options.relayState !== undefined && <input type="hidden" name="RelayState" value={options.relayState} />}
        <p>{t.samlPost.intro}</p>
        <button type="submit">{t.samlPost.button}</button>
      </form>
    </>,
  );
}

/** The script of the page above: submits the form once the page is shown. */
export const SAML_POST_SCRIPT = "document.getElementById('saml-post').submit();\n";
