import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { securityHeaderOptions, securityHeaders } from '../../src/middleware/security-headers';

/** Every header except the ones that differ per response. */
function headersOf(res: request.Response): Record<string, string> {
  const { date: _date, etag: _etag, ...rest } = res.headers as Record<string, string>;
  return rest;
}

async function answer(middleware: express.RequestHandler) {
  const app = express();
  app.use((_req, res, next) => {
    res.setHeader('X-Powered-By', 'something');
    next();
  });
  app.use(middleware);
  app.get('/', (_req, res) => {
    res.json({ ok: true });
  });
  return request(app).get('/');
}

test.each(['http://localhost:3000', 'https://sso.example.com'])(
  'the recorded headers are exactly what helmet sets itself (%s)',
  async (baseUrl) => {
    const options = securityHeaderOptions(baseUrl);
    const viaHelmet = await answer(helmet(options));
    const recorded = await answer(securityHeaders(options));
    expect(headersOf(recorded)).toEqual(headersOf(viaHelmet));
    expect(recorded.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(recorded.headers['x-powered-by']).toBeUndefined();
    expect(Object.keys(recorded.headers).filter((h) => h.startsWith('x-') || h.includes('policy')).length).toBeGreaterThan(8);
  },
);

test('a configuration that varies per request (a nonce function) is refused, not frozen', () => {
  expect(() =>
    securityHeaders({
      contentSecurityPolicy: { directives: { scriptSrc: ["'self'", () => `'nonce-${Math.random().toString(36).slice(2)}'`] } },
    }),
  ).toThrow(/varies per request/);
});
