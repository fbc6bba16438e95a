import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { bearerAt, checkConsolePage, newConsoleContext, signInAt } from '../helpers/console-browser';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import { makeTestSp } from '../helpers/saml';
import type { TestApp } from '../helpers/test-app';

/**
 * The console's SAML applications in Chromium (CONTRACT §19, §14): an admin adds an application by hand, sees a refused
 * form with its error summary, edits it, and finds the IdP values and the sign-in link; each change checked through the
 * REST API; axe-core WCAG 2.1 AA on every page in both colour schemes at 1280 and 320 px, in English and German.
 * CONSOLE_SHOTS=<dir> writes a screenshot of each page.
 */
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;
const SHOTS = process.env.CONSOLE_SHOTS;

beforeAll(async () => {
  ({ t, baseUrl, stop: stopApp } = await createListeningTestApp());
  browser = await launchChromium();
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopApp?.();
});

test('an admin adds a SAML application, is told what is wrong, edits it and finds the values to give it', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'] });
  const bearer = await bearerAt(baseUrl, admin.email, admin.password);
  const sp = makeTestSp();
  const context = await newConsoleContext(browser);
  const page = await context.newPage();
  const check = (name: string) => checkConsolePage(page, name, SHOTS);
  try {
    await signInAt(page, baseUrl, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'SAML' }).click();
    await page.getByText('No SAML applications yet').waitFor();
    await check('saml-empty');

    await page.getByRole('link', { name: 'Add a SAML application' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Payroll');
    await page.getByLabel('Entity ID').fill(sp.entityId);
    await page.getByLabel('Assertion consumer service (ACS) URLs').fill('http://payroll.example.test/acs');
    await check('saml-new');
    await page.getByRole('button', { name: 'Add application' }).click();
    await page.locator('#error-summary').waitFor();
    expect(await page.title()).toMatch(/^Error: /);
    await check('saml-new-refused');

    await page.getByLabel('Assertion consumer service (ACS) URLs').fill(sp.acsUrl);
    await page.getByLabel('Require signed requests').check();
    await page.getByLabel("Application's certificate").fill(sp.key.certificatePem);
    await page.getByRole('button', { name: 'Add application' }).click();
    await page.getByRole('status').filter({ hasText: 'SAML application Payroll added.' }).waitFor();
    await check('saml-detail');
    const apps = (await (await fetch(`${baseUrl}/api/admin/saml-apps`, { headers: { authorization: bearer } })).json()) as {
      apps: Array<{ id: string; entity_id: string; want_authn_requests_signed: boolean; acs_urls: Array<{ url: string }> }>;
    };
    const app = apps.apps.find((a) => a.entity_id === sp.entityId)!;
    expect(app).toMatchObject({ want_authn_requests_signed: true, acs_urls: [{ url: sp.acsUrl }] });

    await page.getByLabel('Display name').fill('cn');
    await page.getByRole('button', { name: 'Save application' }).click();
    await page.getByRole('status').filter({ hasText: 'SAML application Payroll saved.' }).waitFor();
    const saved = (await (await fetch(`${baseUrl}/api/admin/saml-apps/${app.id}`, { headers: { authorization: bearer } })).json()) as {
      app: { attributes: { name: string } };
    };
    expect(saved.app.attributes.name).toBe('cn');

    await page.goto(`${baseUrl}/admin/saml-apps`);
    await page.getByRole('link', { name: 'Sign in to Payroll' }).waitFor();
    expect(await page.locator('#idp-metadata-url').textContent()).toBe(`${t.config.oidcIssuer}/saml/metadata`);
    await check('saml-list');

    await page.getByRole('button', { name: 'Rotate the signing key' }).click();
    await page.getByRole('heading', { name: 'Rotate the SAML signing key?' }).waitFor();
    await check('saml-rotate-confirm');

    const de = await context.newPage();
    await de.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
    await de.goto(`${baseUrl}/admin/saml-apps/${app.id}`);
    await de.getByRole('heading', { name: 'SAML-Anwendung: Payroll' }).waitFor();
    await checkConsolePage(de, 'saml-detail-de', SHOTS);
  } finally {
    await context.close();
  }
}, 240_000);
