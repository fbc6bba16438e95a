import fs from 'node:fs';
import request from 'supertest';
import type { Browser } from 'playwright-core';
import { checkAccessible } from '../helpers/accessibility';
import { makeApiResource } from '../helpers/apps';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser } from '../helpers/factories';
import { authorizeParams, authorizePath, createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * Issue 30 (CONTRACT §23) in Chromium: a self-registered app's sign-in page warns that no administrator reviewed it,
 * and its consent page names the API it asks tokens for; both pass axe-core WCAG 2.1 AA in English and German, light
 * and dark, at 1280 and 320 px. PAGES_SHOTS=<dir> also writes a screenshot of each.
 */
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;
const SHOTS = process.env.PAGES_SHOTS;

beforeAll(async () => {
  ({ t, baseUrl, stop: stopApp } = await createListeningTestApp({ CLIENT_REGISTRATION: 'open' }));
  browser = await launchChromium();
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopApp?.();
});

test.each([
  ['en-US', 'en', 'Email address', 'Password', 'Sign in', 'No administrator has reviewed this app', 'access to these APIs'],
  ['de-DE', 'de', 'E-Mail-Adresse', 'Passwort', 'Anmelden', 'Kein Administrator hat diese App geprüft', 'Zugriff auf diese APIs'],
])(
  '%s: the sign-in page warns about a self-registered app; consent names the API',
  async (locale, tag, emailLabel, passwordLabel, submit, warning, apis) => {
    const resource = await makeApiResource(t, { name: 'Notes API', scopes: ['notes:read'] });
    await t.db('api_resources').where({ id: resource.id }).update({ open_registration: true });
    const redirectUri = `${baseUrl}/cb-not-served`;
    const reg = await request(t.app)
      .post('/api/oauth/register')
      .send({ client_name: 'Notes Desktop', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', scope: 'openid notes:read' });
    expect(reg.status).toBe(201);
    const user = await makeUser(t);
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 }, locale });
    const page = await context.newPage();
    try {
      const params = authorizeParams(
        { clientId: reg.body.client_id, redirectUris: [redirectUri] },
        { scope: 'openid notes:read', resource: resource.identifier },
      ).params;
      await page.goto(`${baseUrl}${authorizePath(params)}`);
      await page.getByText(warning).first().waitFor();
      await checkAccessible(page, `login-unreviewed-${tag}`, SHOTS);
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.getByLabel(emailLabel).fill(user.email);
      await page.getByLabel(passwordLabel, { exact: true }).fill(user.password);
      await page.getByRole('button', { name: submit, exact: true }).click();
      await page.getByText(apis).waitFor();
      expect(await page.locator('#api-resources').innerText()).toContain('Notes API');
      expect(await page.locator('#api-resources').innerText()).toContain(resource.identifier);
      await checkAccessible(page, `consent-resources-${tag}`, SHOTS);
    } finally {
      await context.close();
    }
  },
);
