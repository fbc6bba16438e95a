import fs from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { checkAccessible } from '../helpers/accessibility';
import { makeApiResource, makeAppClient } from '../helpers/apps';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * Issue 32 item 8's papercuts, measured in Chromium in English and German at 1280 and 320 px (screenshots in
 * PAPERCUT_SHOTS, default /tmp/shots/day2-browser): the /account sessions table breaks no word inside a button or an
 * IP address; a person without a password is offered a set-password link, not "current password"; the device page's
 * code is large and on one line; the upstream-provider form keeps the typed values after a refusal and names the
 * setting that allows a private issuer; a pending invitation in the console, axe-clean in both schemes.
 */
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;
const SHOTS = process.env.PAPERCUT_SHOTS ?? '/tmp/shots/day2-browser';
const LANGUAGES = [
  { locale: 'en-GB', tag: 'en' },
  { locale: 'de-DE', tag: 'de' },
] as const;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const LONG_IP = '2001:0db8:85a3:0000:0000:8a2e:0370:7334';

beforeAll(async () => {
  ({ t, baseUrl, stop: stopApp } = await createListeningTestApp());
  browser = await launchChromium();
  fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopApp?.();
});

function newContext(locale: string): Promise<BrowserContext> {
  return browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 }, locale });
}

/** Words inside the matched elements that the browser laid out over more than one line. */
function brokenWords(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((sel) => {
    const broken: string[] = [];
    for (const el of Array.from(document.querySelectorAll(sel))) {
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const text = n.textContent ?? '';
        const words = /\S+/g;
        for (let m = words.exec(text); m; m = words.exec(text)) {
          const range = document.createRange();
          range.setStart(n, m.index);
          range.setEnd(n, m.index + m[0].length);
          const tops = new Set(
            Array.from(range.getClientRects())
              .filter((r) => r.width > 0)
              .map((r) => Math.round(r.top)),
          );
          if (tops.size > 1) broken.push(m[0]);
        }
      }
    }
    return broken;
  }, selector);
}

/** Signs in through the /login form in any language (by the fields' ids). */
async function signIn(page: Page, who: { email: string; password: string }): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.fill('#email', who.email);
  await page.fill('#password', who.password);
  await Promise.all([page.waitForNavigation(), page.press('#password', 'Enter')]);
  // A person without a console lands on "You are signed in" at /login; a refusal would show its summary.
  expect(await page.locator('#error-summary').count()).toBe(0);
}

/** How far the page scrolls sideways (0 when it fits). */
const sideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

test('/account sessions: no word broken inside a button or an IP address at 1280 and 320 px, en and de', async () => {
  const user = await makeUser(t, { firstName: 'Sam', lastName: 'Sessions' });
  // Two other sessions with a long browser name, then every session from a long IPv6 address.
  for (const agent of [
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 Version/18.1 Mobile/15E148',
  ]) {
    const res = await fetch(`${baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': agent },
      body: JSON.stringify({ email: user.email, password: user.password }),
    });
    expect(res.status).toBe(200);
  }
  for (const l of LANGUAGES) {
    const context = await newContext(l.locale);
    const page = await context.newPage();
    try {
      await signIn(page, user);
      await t.db('sessions').where({ user_id: user.id }).update({ ip: LONG_IP });
      await page.goto(`${baseUrl}/account#sessions`);
      await page.locator('#sessions table').waitFor();
      expect(await page.locator('#sessions').getByText(LONG_IP).count()).toBeGreaterThanOrEqual(3);
      for (const width of [1280, 320]) {
        await page.setViewportSize({ width, height: 900 });
        expect([
          width,
          await brokenWords(page, '#sessions button, #sessions td.nowrap, #sessions strong, #sessions th, #sessions time'),
        ]).toEqual([width, []]);
        expect([width, await sideways(page)]).toEqual([width, 0]);
        await page.locator('#sessions').screenshot({ path: `${SHOTS}/account-sessions-${l.tag}-${width}.png` });
      }
    } finally {
      await context.close();
    }
  }
}, 90_000);

test('a person without a password is offered a set-password link by mail, not "current password", en and de', async () => {
  const user = await makeUser(t, { firstName: 'Nopa', lastName: 'Sword' });
  const said = { en: 'Email me a link to set a password', de: 'Link zum Festlegen eines Passworts senden' };
  const { password_hash: hash } = (await t.db('users').where({ id: user.id }).first()) as { password_hash: string };
  for (const l of LANGUAGES) {
    const context = await newContext(l.locale);
    const page = await context.newPage();
    try {
      // Signed in, then the password is gone (as for a person who came from a provider or a passkey).
      await t.db('users').where({ id: user.id }).update({ password_hash: hash });
      await signIn(page, user);
      await t.db('users').where({ id: user.id }).update({ password_hash: null });
      await page.goto(`${baseUrl}/account`);
      const section = page.locator('section[aria-labelledby="password-h"]');
      await section.waitFor();
      expect(await section.locator('#current_password').count()).toBe(0);
      const button = section.getByRole('button', { name: said[l.tag] });
      expect(await button.count()).toBe(1);
      await checkAccessible(page, `account-no-password-${l.tag}`, SHOTS);
      const before = t.mails.length;
      await button.click();
      await page.waitForLoadState();
      const deadline = Date.now() + 20_000;
      while (t.mails.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const mail = t.mails[t.mails.length - 1]!;
      expect(t.mails.length).toBeGreaterThan(before);
      expect(mail.to).toBe(user.email);
      expect(mail.text).toContain('/set-password');
    } finally {
      await context.close();
    }
  }
}, 90_000);

test("the device page's code is large and on one line at 1280 and 320 px, en and de", async () => {
  const user = await makeUser(t, { firstName: 'Dee', lastName: 'Vice' });
  const resource = await makeApiResource(t, { scopes: ['shows:read'] });
  const client = await makeAppClient(t, {
    type: 'public',
    grantTypes: [DEVICE_GRANT],
    redirectUris: [],
    name: 'Living-room TV',
    allowedResources: [resource.identifier],
  });
  const discovery = (await (await fetch(`${baseUrl}/.well-known/openid-configuration`)).json()) as {
    device_authorization_endpoint: string;
  };
  for (const l of LANGUAGES) {
    const res = await fetch(discovery.device_authorization_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: client.clientId, scope: 'openid shows:read', resource: resource.identifier }),
    });
    const started = (await res.json()) as { user_code: string };
    expect([res.status, typeof started.user_code]).toEqual([200, 'string']);
    const context = await newContext(l.locale);
    const page = await context.newPage();
    try {
      await signIn(page, user);
      await page.goto(`${baseUrl}/device`);
      await page.fill('#user_code', started.user_code);
      await page.locator('form[action="/device"] button[type=submit]').click();
      const code = page.locator('#user-code');
      await code.waitFor();
      expect((await code.textContent())?.trim()).toBe(started.user_code);
      for (const width of [1280, 320]) {
        await page.setViewportSize({ width, height: 900 });
        const box = await code.evaluate((el) => {
          const range = document.createRange();
          range.selectNodeContents(el);
          const lines = new Set(
            Array.from(range.getClientRects())
              .filter((r) => r.width > 0)
              .map((r) => Math.round(r.top)),
          ).size;
          return { fontPx: parseFloat(getComputedStyle(el).fontSize), lines, fits: el.getBoundingClientRect().right <= window.innerWidth };
        });
        expect([width, box.fontPx >= 24, box.lines, box.fits]).toEqual([width, true, 1, true]);
        expect([width, await sideways(page)]).toEqual([width, 0]);
        await page.screenshot({ path: `${SHOTS}/device-code-${l.tag}-${width}.png`, fullPage: true });
      }
    } finally {
      await context.close();
    }
  }
}, 90_000);

test('the upstream-provider form keeps the typed values after a refused private issuer and names the setting, en and de', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'] });
  for (const l of LANGUAGES) {
    const context = await newContext(l.locale);
    const page = await context.newPage();
    try {
      await signIn(page, admin);
      await page.goto(`${baseUrl}/admin/identity-providers/new?kind=oidc`);
      const typed = { 'f-slug': `corp-${l.tag}`, 'f-name': 'Corp SSO', 'f-issuer': 'http://127.0.0.1:9/', 'f-client_id': 'corp-app' };
      for (const [id, value] of Object.entries(typed)) await page.fill(`#${id}`, value);
      await page.fill('#f-client_secret', 'a-secret-value');
      await page.locator('form[action="/admin/identity-providers"] button[type=submit]').click();
      await page.locator('#error-summary').waitFor({ timeout: 15_000 });
      for (const [id, value] of Object.entries(typed)) expect([id, await page.inputValue(`#${id}`)]).toEqual([id, value]);
      expect(await page.inputValue('#f-client_secret')).toBe('');
      // The refusal itself, in the page's language, names the setting that allows it and what it is for.
      const refusal = await page.locator('#error-summary').innerText();
      expect(refusal).toContain('idp_allow_private');
      expect(refusal).toContain(l.tag === 'de' ? 'lokale Entwicklung' : 'local development');
      const hint = page.locator('#private-issuer');
      expect(await hint.getByRole('link').getAttribute('href')).toBe('/admin/settings#f-idp_allow_private');
      await checkAccessible(page, `provider-private-issuer-${l.tag}`, SHOTS);
    } finally {
      await context.close();
    }
  }
}, 90_000);

test('an invited person shows as pending in the console until the password is set, en and de, axe-clean', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'] });
  const said = { en: /invited/i, de: /eingeladen/i };
  for (const l of LANGUAGES) {
    const context = await newContext(l.locale);
    const page = await context.newPage();
    try {
      await signIn(page, admin);
      await page.goto(`${baseUrl}/admin/users/new`);
      const email = `invited-${l.tag}-${Date.now()}@example.test`;
      await page.fill('#f-email', email);
      await page.fill('#f-first_name', 'Ivy');
      await page.fill('#f-last_name', 'Invited');
      await page.locator('form[action="/admin/users"] button[type=submit]').click();
      await page.waitForURL(/\/admin\/users\/[0-9a-f-]{36}/);
      expect(await page.locator('.badge.invited').first().textContent()).toMatch(said[l.tag]);
      await checkAccessible(page, `user-invited-${l.tag}`, SHOTS);
    } finally {
      await context.close();
    }
  }
}, 90_000);
