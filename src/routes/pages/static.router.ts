import type { Response } from 'express';
import fs from 'node:fs';
import path from 'node:path';
import { CONSOLE_SCRIPT } from '../../views/console-script';
import { PASSKEYS_SCRIPT } from '../../views/passkeys-script';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';

/** The browser bundle of @simplewebauthn/browser, read once from the installed package. */
function loadWebAuthnBundle(): string {
  const entry = require.resolve('@simplewebauthn/browser');
  return fs.readFileSync(path.resolve(path.dirname(entry), '../dist/bundle/index.umd.min.js'), 'utf8');
}

/** Same-origin scripts of the pages' WebAuthn ceremonies (the CSP allows script-src 'self' only). */
export function createStaticRouter(deps: RouteDeps) {
  let bundle: string | undefined;
  const script = { auth: 'none', document: false, tags: ['Pages'], response: { description: 'JavaScript' } } as const;
  const send = (body: string, res: Response) =>
    res.type('application/javascript').set('Cache-Control', 'public, max-age=3600').send(body);
  return declareRouter(deps, [
    route(
      { ...script, method: 'get', path: '/simplewebauthn-browser.js', summary: '@simplewebauthn/browser bundle' },
      (_input, _req, res) => send((bundle ??= loadWebAuthnBundle()), res),
    ),
    route({ ...script, method: 'get', path: '/passkeys.js', summary: 'WebAuthn glue of /login and /account' }, (_input, _req, res) =>
      send(PASSKEYS_SCRIPT, res),
    ),
    route({ ...script, method: 'get', path: '/console.js', summary: 'Copy buttons of the administration console' }, (_input, _req, res) =>
      send(CONSOLE_SCRIPT, res),
    ),
  ]);
}
