import fs from 'node:fs';
import http, { type Server } from 'node:http';
import path from 'node:path';
import type { Express } from 'express';
import type { Browser, Page } from 'playwright-core';
import { heldPort } from './oauth';
import { loadEsm } from './oidc';

/**
 * The single-page-app guide (docs/guide-spa.md) as a reader runs it: its three modules served from their own localhost
 * origin with examples/apps/spa.mjs and oauth4webapi, signing in at the server, calling the example API and
 * refreshing. Shared by the guide's own browser test and the console's (an SPA created with the console form alone).
 */
const ROOT = path.join(__dirname, '../..');
const guide = fs.readFileSync(path.join(ROOT, 'docs/guide-spa.md'), 'utf8');
const blocks = [...guide.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** The guide's js block that starts with `first` (`// settings.js`, `// signin.js`, `// callback.js`). */
export function guideBlock(first: string): string {
  const found = blocks.find((b) => b.startsWith(first));
  if (!found) throw new Error(`docs/guide-spa.md has no js block starting with ${first}`);
  return found;
}

export const resourceServer = loadEsm<{
  createApi(options: { issuer: string; audience: string; insecure: boolean; corsOrigins: string[] }): Promise<Express>;
}>(path.join(ROOT, 'examples/apps/resource-server.mjs'));

/**
 * A server on every local address (localhost may resolve to ::1 or 127.0.0.1) holding a port of its own from the start
 * (heldPort); `serve` gives it its handler once that is made. `servers` collects it for closing.
 */
export async function holdLocalPort(servers: Server[]): Promise<{ port: number; serve(handler: http.RequestListener | Express): void }> {
  const { server, port } = await heldPort();
  servers.push(server);
  return { port, serve: (handler) => server.on('request', handler) };
}

export async function closeAll(servers: Server[]): Promise<void> {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** The app's static files: the guide's modules (settings.js as given), spa.mjs and oauth4webapi through an import map. */
export function serveSpa(spaOrigin: string, settings: string): http.RequestListener {
  const files: Record<string, string> = {
    '/settings.js': settings,
    '/signin.js': guideBlock('// signin.js'),
    // The test reads what the guide's code ended with; nothing of the guide's code changes.
    '/callback.js': `${guideBlock('// callback.js')}\nwindow.__result = { claims, invoices, tokens, fresh };\n`,
    '/spa.mjs': fs.readFileSync(path.join(ROOT, 'examples/apps/spa.mjs'), 'utf8'),
    '/oauth4webapi.js': fs.readFileSync(require.resolve('oauth4webapi'), 'utf8'),
  };
  const page = (script: string) =>
    `<!doctype html><html lang="en"><head><title>Invoices web</title>` +
    `<script type="importmap">{"imports":{"oauth4webapi":"/oauth4webapi.js"}}</script>` +
    `<script type="module" src="${script}"></script></head><body><h1>Invoices web</h1></body></html>`;
  return (req, res) => {
    const { pathname } = new URL(req.url ?? '/', spaOrigin);
    if (pathname === '/' || pathname === '/callback') {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(page(pathname === '/' ? '/signin.js' : '/callback.js'));
    } else if (files[pathname] !== undefined) {
      res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(files[pathname]);
    } else {
      res.writeHead(404).end();
    }
  };
}

export interface SpaResult {
  claims: { sub: string; iss: string; aud: string };
  invoices: { caller: string; client_id: string };
  tokens: { access_token: string; refresh_token: string };
  fresh: { access_token: string; refresh_token: string };
}

/**
 * Opens the app, signs in as `user` at the server (sign-in page, consent) and waits for the callback module to finish.
 * `problems` collects page errors and console errors (a CORS refusal is logged there).
 */
export async function signInThroughSpa(
  browser: Browser,
  o: { baseUrl: string; spaOrigin: string; user: { email: string; password: string } },
): Promise<{ result: SpaResult; page: Page; problems: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (msg) => {
    // Failed loads (the favicon's 404, an expected 401) are not problems; a CORS refusal is.
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) problems.push(msg.text());
  });
  try {
    await page.goto(`${o.spaOrigin}/`);
    await page.waitForURL((url) => url.origin === o.baseUrl && url.pathname === '/login');
    await page.getByLabel('Email address').fill(o.user.email);
    await page.getByLabel('Password').fill(o.user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/consent');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((url) => url.origin === o.spaOrigin && url.pathname === '/callback');
    await page
      .waitForFunction(() => '__result' in window, undefined, { timeout: 15_000 })
      .catch(() => {
        throw new Error(`the callback module did not finish: ${problems.join(' | ')}`);
      });
    const result = (await page.evaluate(() => (window as unknown as { __result: unknown }).__result)) as SpaResult;
    return { result, page, problems, close: () => context.close() };
  } catch (err) {
    await context.close();
    throw err;
  }
}
