import { checkPath, isAllowListedUrl, resolveLoginTarget, type LoginApps } from '../../src/lib/login-target';

const login: LoginApps = { apps: { portal: 'https://portal.test', admin: 'https://admin.test:8443' }, defaultApp: 'portal' };

const ok = (input: Parameters<typeof resolveLoginTarget>[0]) => {
  const result = resolveLoginTarget(input, login);
  if (!result.ok) throw new Error(`expected ok, got ${result.reason}`);
  return result.url;
};
const refused = (input: Parameters<typeof resolveLoginTarget>[0]) => resolveLoginTarget(input, login).ok === false;

describe('resolveLoginTarget: allowed destinations', () => {
  test('app key -> that app’s root', () => {
    expect(ok({ app: 'portal' })).toBe('https://portal.test/');
    expect(ok({ app: 'admin' })).toBe('https://admin.test:8443/');
  });

  test('app + path -> the path on that app', () => {
    expect(ok({ app: 'admin', path: '/users?page=2#top' })).toBe('https://admin.test:8443/users?page=2#top');
  });

  test('path alone -> the default app', () => {
    expect(ok({ path: '/dashboard' })).toBe('https://portal.test/dashboard');
    expect(ok({ path: '/' })).toBe('https://portal.test/');
  });

  test('nothing -> the default app’s root', () => {
    expect(ok({})).toBe('https://portal.test/');
  });

  test('redirect_to on an allow-listed origin, normalised by the WHATWG parser', () => {
    expect(ok({ redirect_to: 'https://portal.test/a/b?x=1' })).toBe('https://portal.test/a/b?x=1');
    expect(ok({ redirect_to: 'HTTPS://PORTAL.test:443/x' })).toBe('https://portal.test/x');
    expect(ok({ redirect_to: 'https://admin.test:8443' })).toBe('https://admin.test:8443/');
  });

  test('encoded slashes in the query of a path are data, not a path', () => {
    expect(ok({ path: '/login?next=%2Fhome' })).toBe('https://portal.test/login?next=%2Fhome');
  });
});

describe('resolveLoginTarget: every off-site or ambiguous destination is refused', () => {
  test.each([
    ['protocol-relative', '//evil.test'],
    ['backslash host', '/\\evil.test'],
    ['encoded protocol-relative', '%2F%2Fevil.test'],
    ['encoded slash after /', '/%2Fevil.test'],
    ['encoded backslash after /', '/%5cevil.test'],
    ['double encoding', '/%252F%252Fevil.test'],
    ['encoded newline', '/x%0d%0aSet-Cookie:a=b'],
    ['no leading slash', 'dashboard'],
    ['absolute URL as path', 'https://evil.test/'],
    ['javascript scheme', 'javascript:alert(1)'],
    ['leading space', ' /dashboard'],
    ['leading tab', '\t/dashboard'],
    ['inner newline', '/dash\nboard'],
    ['NUL', '/dash\u0000board'],
    ['non-breaking space', '\u00a0/x'],
    ['line separator', '/x\u2028'],
    ['backslash anywhere', '/a\\b'],
    ['dot segments to //', '/..//evil.test'],
    ['empty', ''],
  ])('path: %s', (_name, path) => {
    expect(refused({ path })).toBe(true);
  });

  test.each([
    ['protocol-relative', '//evil.test'],
    ['look-alike subdomain', 'https://portal.test.evil.test/'],
    ['userinfo trick', 'https://portal.test@evil.test/'],
    ['userinfo on the right host', 'https://user:pw@portal.test/'],
    ['backslash userinfo', 'https://portal.test\\@evil.test/'],
    ['backslash scheme', 'https:\\\\evil.test'],
    ['javascript scheme', 'javascript:alert(1)'],
    ['javascript with origin text', 'javascript://portal.test/%0aalert(1)'],
    ['data URL', 'data:text/html,hi'],
    ['leading whitespace', ' https://portal.test/'],
    ['trailing newline', 'https://portal.test/\n'],
    ['tab in host', 'https://por\ttal.test/'],
    ['other scheme', 'ftp://portal.test/'],
    ['wrong port', 'https://portal.test:8443/'],
    ['wrong scheme', 'http://portal.test/'],
    ['relative', '/dashboard'],
    ['scheme only', 'https:'],
    ['single slash scheme', 'https:/evil.test'],
    ['encoded slash in path', 'https://portal.test/%2F%2Fevil.test'],
    ['double slash path', 'https://portal.test//evil.test'],
    ['unicode look-alike host', 'https://pοrtal.test/'],
    ['too long', `https://portal.test/${'a'.repeat(3000)}`],
  ])('redirect_to: %s', (_name, redirect_to) => {
    expect(refused({ redirect_to })).toBe(true);
  });

  test.each([['unknown'], ['__proto__'], ['constructor'], ['toString'], [''], ['PORTAL']])('app key %p', (app) => {
    expect(refused({ app })).toBe(true);
  });

  test('non-string values (repeated query parameters, JSON numbers and objects)', () => {
    expect(refused({ app: ['portal', 'admin'] })).toBe(true);
    expect(refused({ path: ['/a', '/b'] })).toBe(true);
    expect(refused({ redirect_to: { href: 'https://portal.test/' } })).toBe(true);
    expect(refused({ path: 42 })).toBe(true);
    expect(refused({ app: null })).toBe(true);
  });

  test('redirect_to combined with app or path is ambiguous', () => {
    expect(refused({ redirect_to: 'https://portal.test/', app: 'portal' })).toBe(true);
    expect(refused({ redirect_to: 'https://portal.test/', path: '/x' })).toBe(true);
  });

  test('path or nothing without a default app', () => {
    const noDefault: LoginApps = { apps: login.apps };
    expect(resolveLoginTarget({ path: '/x' }, noDefault).ok).toBe(false);
    expect(resolveLoginTarget({}, noDefault).ok).toBe(false);
  });

  test('a failure says why', () => {
    expect(resolveLoginTarget({ app: 'nope' }, login)).toEqual({ ok: false, reason: 'unknown app' });
    expect(checkPath('//x')).toBe('path must start with a single /');
  });
});

describe('isAllowListedUrl', () => {
  test('accepts what resolveLoginTarget produced and refuses once the origin leaves the list', () => {
    const url = ok({ app: 'admin', path: '/x' });
    expect(isAllowListedUrl(url, login)).toBe(true);
    expect(isAllowListedUrl(url, { apps: { portal: 'https://portal.test' } })).toBe(false);
  });
});
