import express, { type RequestHandler } from 'express';
import path from 'node:path';
import { z } from 'zod';
import { Document } from '../../http/outcome';
import { declareRouter, route } from '../route';
import type { RouteDeps } from '../types';
import { buildOpenApiDocument } from './openapi';

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>service-sso API</title>
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
</head>
<body>
<noscript><p>This page needs JavaScript. The raw description is at <a href="/api/openapi.json">/api/openapi.json</a>.</p></noscript>
<div id="swagger-ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>`;

// Served as a file so that the page runs under the global CSP (script-src 'self', no inline scripts).
const INIT_SCRIPT = `window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true });\n`;

/** GET /api/openapi.json (OpenAPI 3.1) and the browsable page /api/docs (CONTRACT §7). */
export function createDocsRouter(deps: RouteDeps) {
  // Generated on first request, when every router of the app is mounted; the app does not change afterwards.
  let document: Record<string, unknown> | undefined;
  const router = declareRouter(
    deps,
    [
      route(
        {
          method: 'get',
          path: '/openapi.json',
          summary: 'This OpenAPI 3.1 description, generated from the route declarations',
          auth: 'none',
          response: { description: 'OpenAPI document', schema: z.looseObject({ openapi: z.literal('3.1.0') }) },
        },
        (_input, req) => (document ??= buildOpenApiDocument(req.app, deps.ctx.config)),
      ),
      route(
        {
          method: 'get',
          path: '/docs',
          summary: 'Browsable API documentation (Swagger UI)',
          auth: 'none',
          // An HTML page: no CORS headers (CONTRACT §8).
          cors: false,
          response: { description: 'HTML page', kind: 'html' },
        },
        () => new Document(200, 'text/html', DOCS_PAGE),
      ),
      route(
        {
          method: 'get',
          path: '/docs/init.js',
          summary: 'Start-up script of the documentation page',
          auth: 'none',
          cors: false,
          document: false,
        },
        () => new Document(200, 'application/javascript', INIT_SCRIPT),
      ),
    ],
    { tags: ['Docs'] },
  );
  // swagger-ui-dist's entry module loads its 1.5 MB bundles: its directory is resolved on the first page view, and
  // the entry module is never loaded.
  // Static files, not routes: they run the scope's steps (under /api: its limiter) but are no declared route.
  let assets: RequestHandler | undefined;
  const serveAsset: RequestHandler = (req, res, next) => {
    assets ??= express.static(path.dirname(require.resolve('swagger-ui-dist/package.json')), { index: false, maxAge: '1d' });
    assets(req, res, next);
  };
  if (deps.scope) deps.scope.files('/docs/assets', [...deps.scope.steps, serveAsset]);
  else router.use('/docs/assets', serveAsset);
  return router;
}
