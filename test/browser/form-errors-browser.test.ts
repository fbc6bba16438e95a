import type { Browser, Page } from 'playwright-core';
import { checkAccessible } from '../helpers/accessibility';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * CONTRACT §18 "Forms tell what went wrong where the eye is", in Chromium, in English and German: a refused console
 * form comes back with the values as entered, a title starting with the translated "Error", an error summary at the
 * top that has the focus and links to each field (a link moves the focus to its field), each message beside its
 * field in the page's language; axe-core WCAG 2.1 AA in both colour schemes at 1280 and 320 px.
 */
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;

beforeAll(async () => {
  ({ t, baseUrl, stop: stopApp } = await createListeningTestApp());
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopApp?.();
});

const LANGUAGES = [
  {
    locale: 'en-GB',
    email: 'Email address',
    password: 'Password',
    signIn: 'Sign in',
    title: /^Error: Create a webhook · /,
    summary: 'There is a problem',
    url: 'url must be an absolute URL',
    events: 'at least one event type is required',
  },
  {
    locale: 'de-DE',
    email: 'E-Mail-Adresse',
    password: 'Passwort',
    signIn: 'Anmelden',
    title: /^Fehler: Webhook erstellen · /,
    summary: 'Es gibt ein Problem',
    url: 'Geben Sie eine vollständige URL ein, z. B. https://example.com/hook.',
    events: 'Geben Sie mindestens einen Ereignistyp an.',
  },
] as const;

const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '');

test.each(LANGUAGES)(
  'a refused webhook form in $locale: summary with focus, links, messages beside fields, values back',
  async (l) => {
    const admin = await makeUser(t, { roles: ['super_admin'] });
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 }, locale: l.locale });
    const page = await context.newPage();
    try {
      await page.goto(`${baseUrl}/login`);
      await page.getByLabel(l.email).fill(admin.email);
      await page.getByLabel(l.password, { exact: true }).fill(admin.password);
      await page.getByRole('button', { name: l.signIn, exact: true }).click();
      await page.waitForURL(/\/admin$/);
      await page.goto(`${baseUrl}/admin/webhooks/new`);
      await page.locator('#f-url').fill('not a url');
      await page.locator('#f-description').fill('CRM sync');
      // The browser's own check of type=url would stop the post first; the server's answer is what is tested here.
      await page.locator('form[action="/admin/webhooks"]').evaluate((f: HTMLFormElement) => (f.noValidate = true));
      await page.locator('form[action="/admin/webhooks"] button[type="submit"]').click();
      await page.locator('#error-summary').waitFor();

      expect(await page.title()).toMatch(l.title);
      expect(await focusedId(page)).toBe('error-summary');
      const summary = page.getByRole('alert').filter({ hasText: l.summary });
      expect(await summary.getByRole('heading').textContent()).toBe(l.summary);
      const links = summary.getByRole('link');
      expect(await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')))).toEqual(['#f-url', '#f-events']);
      expect(await links.first().textContent()).toContain(l.url);
      // Beside each field, in the page's language, tied to it by aria-describedby.
      expect(await page.locator('#f-url-error').textContent()).toContain(l.url);
      expect(await page.locator('#f-events-error').textContent()).toContain(l.events);
      expect(await page.locator('#f-url').getAttribute('aria-describedby')).toContain('f-url-error');
      expect(await page.locator('#f-url').getAttribute('aria-invalid')).toBe('true');
      // The values as entered.
      expect(await page.locator('#f-url').inputValue()).toBe('not a url');
      expect(await page.locator('#f-description').inputValue()).toBe('CRM sync');

      await links.nth(1).click();
      expect(await focusedId(page)).toBe('f-events');
      await checkAccessible(page, `webhook-form-refused-${l.locale}`, process.env.CONSOLE_SHOTS);
      expect(await t.db('webhook_subscriptions').where({ description: 'CRM sync' }).first()).toBeUndefined();
    } finally {
      await context.close();
    }
  },
  120_000,
);
