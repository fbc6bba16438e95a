import express, { Router } from 'express';
import { absolutePath } from 'swagger-ui-dist';
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
export function createDocsRouter({ ctx }: RouteDeps): Router {
  const router = Router();
  const document = buildOpenApiDocument(ctx.config);
  router.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  router.get('/docs', (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(INIT_SCRIPT);
  });
  router.use('/docs/assets', express.static(absolutePath(), { index: false, maxAge: '1d' }));
  return router;
}
