import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { allowFormTargets, formActionSource, securityHeaderOptions, securityHeaders } from '../../src/middleware/security-headers';

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

describe('form-action (issue 30)', () => {
  test("the recorded policy says form-action 'self'", async () => {
    const res = await answer(securityHeaders(securityHeaderOptions('https://sso.example.com')));
    expect(res.headers['content-security-policy']).toContain("form-action 'self';");
  });

  test.each([
    ['https://app.example.com/callback?x=1', 'https://app.example.com'],
    ['http://127.0.0.1:8123/cb', 'http://127.0.0.1:8123'],
    ['https://[::1]:8443/cb', 'https://[::1]:8443'],
    ['com.example.app:/oauth2redirect', 'com.example.app:'],
    ['javascript:alert(1)', undefined],
    ['data:text/html,x', undefined],
    ['not a url', undefined],
  ])('formActionSource(%s) is %s', (url, source) => {
    expect(formActionSource(url)).toBe(source);
  });

  test('allowFormTargets widens only the form-action directive, once per source', async () => {
    const app = express();
    app.use(securityHeaders(securityHeaderOptions('https://sso.example.com')));
    app.get('/', (_req, res) => {
      allowFormTargets(res, ['https://a.test/x', undefined, 'https://a.test/y', 'javascript:void(0)', 'https://b.test/']);
      res.send('ok');
    });
    const csp = (await request(app).get('/')).headers['content-security-policy'] as string;
    expect(csp).toContain("form-action 'self' https://a.test https://b.test;");
    expect(csp).toContain("default-src 'self';");
    expect(csp).not.toContain('javascript');
  });
});
