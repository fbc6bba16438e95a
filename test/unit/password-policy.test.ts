import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { breachedListSize, isCommonBreachedPassword } from '../../src/lib/breached-passwords';
import { checkPwnedRange } from '../../src/lib/pwned-range';
import { passwordRuleVerdict, type PasswordPolicy } from '../../src/services/password-policy';

const OFF: PasswordPolicy = { min_length: 6, breached_check: false, reject_email_local_part: false };
const ALL: PasswordPolicy = { min_length: 12, breached_check: true, reject_email_local_part: true };
const owner = { email: 'Marianne.Dupont@example.com', brandName: 'Acme SSO' };
const breached = (p: string) => p === 'listed-password-1';

describe('password policy: one verdict, as a table', () => {
  test.each([
    // [policy, password, verdict]
    [OFF, 'abcdef', undefined],
    [OFF, 'abcde', 'too_short'],
    [OFF, '🔑🔑🔑🔑🔑🔑', undefined], // six characters (code points), 24 bytes
    [OFF, 'x'.repeat(73), 'too_long'],
    [OFF, 'é'.repeat(37), 'too_long'], // 37 characters, 74 bytes
    [OFF, 'listed-password-1', undefined], // the default changes nothing
    [OFF, 'marianne.dupont-secret', undefined],
    [ALL, 'short-one', 'too_short'],
    [ALL, 'listed-password-1', 'breached'],
    [ALL, 'MY-marianne.dupont-pass', 'personal'], // the local part, ignoring case
    [ALL, 'i-love-acme sso-a-lot', 'personal'], // the brand name, ignoring case
    [ALL, 'correct horse battery', undefined],
    [{ ...OFF, min_length: 72 }, 'a'.repeat(71), 'too_short'],
    [{ ...OFF, min_length: 72 }, 'a'.repeat(72), undefined],
  ] as const)('%j %s -> %s', (policy, password, verdict) => {
    expect(passwordRuleVerdict(policy, password, owner, breached)).toBe(verdict);
  });

  test('a local part shorter than 3 characters is not personal (jo@ would refuse every "jo")', () => {
    const policy = { ...OFF, reject_email_local_part: true };
    expect(passwordRuleVerdict(policy, 'banjo-player-7', { email: 'jo@example.com', brandName: 'X' }, breached)).toBeUndefined();
    expect(passwordRuleVerdict(policy, 'banjo-player-7', { email: 'anjo@example.com', brandName: 'X' }, breached)).toBe('personal');
  });
});

describe('the shipped breached-password list', () => {
  test('holds at least the 100,000 most common breached passwords, matched exactly', () => {
    expect(breachedListSize()).toBeGreaterThanOrEqual(100_000);
    for (const common of ['123456', 'password', 'qwerty123', 'iloveyou', 'P@ssw0rd', 'Password1']) {
      expect({ common, listed: isCommonBreachedPassword(common) }).toEqual({ common, listed: true });
    }
    for (const rare of ['correct horse battery staple 9q', 'Xk4!vT8#pLm2@wQz', 'PASSWORD1-not-listed']) {
      expect({ rare, listed: isCommonBreachedPassword(rare) }).toEqual({ rare, listed: false });
    }
  });
});

describe("Have I Been Pwned's range API (a local fake)", () => {
  let server: http.Server;
  let base: string;
  const seen: string[] = [];
  let mode: 'answer' | 'hang' | 'error' = 'answer';
  const sha1 = (p: string) => createHash('sha1').update(p).digest('hex').toUpperCase();
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(`${req.url} padding=${req.headers['add-padding']}`);
      if (mode === 'hang') return; // never answers
      if (mode === 'error') return res.writeHead(503).end();
      const prefix = req.url!.split('/').pop()!;
      const hit = sha1('pwned-only-here');
      const lines = ['0018A45C4D1DEF81644B54AB7F969B88D65:0', '00D4F6E8FA6EECAD2A3AA415EEC418D38EC:2'];
      if (hit.startsWith(prefix)) lines.push(`${hit.slice(5)}:42`);
      res.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('only the first 5 hex characters of the SHA-1 leave the server, with padding asked for', async () => {
    mode = 'answer';
    seen.length = 0;
    expect(await checkPwnedRange(base, 'pwned-only-here')).toEqual({ found: true });
    expect(await checkPwnedRange(base, 'never-pwned-anywhere')).toEqual({ found: false });
    expect(seen).toEqual([
      `/range/${sha1('pwned-only-here').slice(0, 5)} padding=true`,
      `/range/${sha1('never-pwned-anywhere').slice(0, 5)} padding=true`,
    ]);
  });

  test('no answer within the timeout, or an error status, is "unavailable" (the caller fails open)', async () => {
    mode = 'hang';
    const started = Date.now();
    const answer = await checkPwnedRange(base, 'pwned-only-here', 300);
    expect(answer).toEqual({ unavailable: expect.stringMatching(/Timeout|abort/i) });
    expect(Date.now() - started).toBeLessThan(5000);
    mode = 'error';
    expect(await checkPwnedRange(base, 'pwned-only-here')).toEqual({ unavailable: 'status 503' });
  });
});
