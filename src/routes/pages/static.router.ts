import fs from 'node:fs';
import path from 'node:path';
import { CONSOLE_SCRIPT } from '../../views/console-script';
import { FORM_ERRORS_SCRIPT } from '../../views/form-errors-script';
import { PASSKEYS_SCRIPT } from '../../views/passkeys-script';
import { RECOVERY_CODES_SCRIPT } from '../../views/recovery-codes-script';
import { SAML_POST_SCRIPT } from '../../views/saml-post';
import { Document } from '../../http/outcome';
import { declareRouter, route } from '../route';
import { derived } from '../../services/settings/live-settings';
import type { RouteDeps } from '../types';

/** The browser bundle of @simplewebauthn/browser, read once from the installed package. */
function loadWebAuthnBundle(): string {
  const entry = require.resolve('@simplewebauthn/browser');
  return fs.readFileSync(path.resolve(path.dirname(entry), '../dist/bundle/index.umd.min.js'), 'utf8');
}

/** Same-origin scripts of the pages' WebAuthn ceremonies (the CSP allows script-src 'self' only). */
export function createStaticRouter(deps: RouteDeps) {
  let bundle: string | undefined;
  const script = {
    auth: 'none',
    document: false,
    tags: ['Pages'],
    cacheControl: 'public, max-age=3600',
    response: { description: 'JavaScript' },
  } as const;
  const send = (body: string) => new Document(200, 'application/javascript', body);
  return declareRouter(deps, [
    route({ ...script, method: 'get', path: '/simplewebauthn-browser.js', summary: '@simplewebauthn/browser bundle' }, () =>
      send((bundle ??= loadWebAuthnBundle())),
    ),
    route({ ...script, method: 'get', path: '/passkeys.js', summary: 'WebAuthn glue of /login and /account' }, () => send(PASSKEYS_SCRIPT)),
    route({ ...script, method: 'get', path: '/console.js', summary: 'Copy buttons of the administration console' }, () =>
      send(CONSOLE_SCRIPT),
    ),
    route({ ...script, method: 'get', path: '/form-errors.js', summary: "Focus of a refused form's error summary" }, () =>
      send(FORM_ERRORS_SCRIPT),
    ),
    route({ ...script, method: 'get', path: '/recovery-codes.js', summary: 'Focus, copy and announce of the recovery-codes panel' }, () =>
      send(RECOVERY_CODES_SCRIPT),
    ),
    route({ ...script, method: 'get', path: '/saml-post.js', summary: 'Submits the SAML HTTP-POST binding form' }, () =>
      send(SAML_POST_SCRIPT),
    ),
  ]);
}

/** A favicon in the brand colour (CONTRACT §15): an SVG, cached for a day. */
export function faviconSvg(color: string): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="${color}"/>` +
    `<path d="M11 14v-3a5 5 0 0 1 10 0v3" fill="none" stroke="#fff" stroke-width="2.5"/><rect x="8" y="14" width="16" height="11" rx="2" fill="#fff"/></svg>`
  );
}

export function createFaviconRouter(deps: RouteDeps) {
  // The colour passed the brand_color declaration (a 6-digit hex), so it can only be a colour in the SVG; redrawn when
  // the setting changes (CONTRACT §18).
  const svg = derived(deps.ctx.settings, (s) => faviconSvg(s.brand.color));
  return declareRouter(deps, [
    route(
      {
        method: 'get',
        path: '/favicon.ico',
        summary: 'Favicon (SVG in the brand colour)',
        auth: 'none',
        document: false,
        tags: ['Pages'],
        cacheControl: 'public, max-age=86400',
        response: { description: 'image/svg+xml' },
      },
      () => new Document(200, 'image/svg+xml', svg()),
    ),
  ]);
}
