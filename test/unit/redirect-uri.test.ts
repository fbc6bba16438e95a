import { checkRedirectUri, REDIRECT_URI_MAX_LENGTH } from '../../src/lib/redirect-uri';

describe('checkRedirectUri', () => {
  test.each([
    'https://app.example.com/callback',
    'https://app.example.com:8443/oauth/cb?tenant=a&x=1',
    'https://app.example.com',
    'https://sub.app.example.com/cb/@handle',
    'http://localhost/callback',
    'http://localhost:3000/callback',
    'http://127.0.0.1:49152/cb',
    'http://127.0.0.1/cb',
    'HTTPS://App.Example.com/cb',
  ])('accepts %s', (uri) => {
    expect(checkRedirectUri(uri)).toEqual({ ok: true });
  });

  test.each([
    ['', /empty/],
    ['/callback', /absolute/],
    ['callback', /absolute/],
    ['//app.example.com/cb', /absolute/],
    ['https:/app.example.com/cb', /absolute/],
    ['https:app.example.com/cb', /absolute/],
    ['https:///cb', /absolute|host/],
    ['https://app.example.com/cb#frag', /fragment/],
    ['https://app.example.com/cb#', /fragment/],
    ['http://app.example.com/cb', /https/],
    ['http://localhost.evil.example/cb', /https/],
    ['http://127.0.0.2/cb', /https/],
    ['http://10.0.0.1/cb', /https/],
    ['javascript:alert(1)', /https/],
    ['JavaScript://app.example.com/%0aalert(1)', /https/],
    ['data:text/html,<script>alert(1)</script>', /https/],
    ['ftp://app.example.com/cb', /https/],
    ['com.example.app:/oauth', /https/],
    ['https://user:pass@app.example.com/cb', /user information/],
    ['https://good.example@evil.example/cb', /user information/],
    ['https://*.example.com/cb', /wildcard/],
    ['https://app.example.com/*', /wildcard/],
    ['https://app.example.com\\@evil.example/cb', /backslash/],
    ['https://app.example.com/c b', /whitespace/],
    [' https://app.example.com/cb', /whitespace/],
    ['https://app.example.com/cb\n', /whitespace/],
    ['https://exa mple.com/', /whitespace/],
    ['https://[::1/cb', /valid URL/],
    [`https://app.example.com/${'a'.repeat(REDIRECT_URI_MAX_LENGTH)}`, /longer/],
  ])('rejects %j', (uri, reason) => {
    const result = checkRedirectUri(uri);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });
});
