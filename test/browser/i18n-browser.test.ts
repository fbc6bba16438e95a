import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ensureSetupLink } from '../../src/services/setup.service';
import { makeAppClient } from '../helpers/apps';
import { checkAccessible } from '../helpers/accessibility';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeClient, makeUser } from '../helpers/factories';
import { authorizeParams, authorizePath, createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';
import { makeIdentityProvider } from '../helpers/upstream';

/**
 * The pages translated last (CONTRACT §15) in Chromium with a German browser: they read German, and pass axe-core
 * WCAG 2.1 AA in both colour schemes at 1280 and 320 px without scrolling sideways (German words are longer).
 * I18N_SHOTS=<dir> also writes a screenshot of each.
 */
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;
const SHOTS = process.env.I18N_SHOTS;

beforeAll(async () => {
  ({ t, baseUrl, stop: stopApp } = await createListeningTestApp({ BRAND_NAME: 'Acme Anmeldung', BRAND_COLOR: '#0f766e' }));
  browser = await launchChromium();
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopApp?.();
});

async function checkPage(page: Page, name: string): Promise<void> {
  expect(await page.getAttribute('html', 'lang')).toBe('de');
  await checkAccessible(page, name, SHOTS);
}

async function germanContext(): Promise<BrowserContext> {
  return browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 }, locale: 'de-DE' });
}

async function signInAs(page: Page, user: { email: string; password: string }, landing = 'Sie sind angemeldet'): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('E-Mail-Adresse').fill(user.email);
  await page.getByLabel('Passwort', { exact: true }).fill(user.password);
  await page.getByRole('button', { name: 'Anmelden', exact: true }).click();
  await page.getByRole('heading', { name: landing }).waitFor();
}

test('/setup in German (before any administrator exists)', async () => {
  const token = new URL((await ensureSetupLink(t.ctx))!).searchParams.get('token')!;
  const context = await germanContext();
  const page = await context.newPage();
  try {
    await page.goto(`${baseUrl}/setup?token=${token}`);
    await page.getByRole('heading', { name: 'Ersten Administrator anlegen' }).waitFor();
    await checkPage(page, 'setup');
  } finally {
    await context.close();
  }
});

test('consent, logout confirmation and /device in German', async () => {
  const user = await makeUser(t);
  const client = await makeClient(t, {
    name: 'Rezeptverwaltung der Stadtbibliothek',
    redirectUris: [`${baseUrl}/callback-not-served`],
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    postLogoutRedirectUris: [`${baseUrl}/signed-out-not-served`],
  });
  const device = await makeAppClient(t, {
    type: 'public',
    grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'],
    redirectUris: [],
    name: 'Wohnzimmer-Fernseher',
  });
  const context = await germanContext();
  const page = await context.newPage();
  try {
    await signInAs(page, user);
    await page.goto(`${baseUrl}${authorizePath(authorizeParams(client, { scope: 'openid profile email offline_access' }).params)}`);
    await page.getByText('Mit Ihrem Konto verbunden bleiben, während Sie die App nicht benutzen').waitFor();
    await checkPage(page, 'consent');

    await page.goto(
      `${baseUrl}/api/oauth/logout?${new URLSearchParams({ client_id: client.clientId, post_logout_redirect_uri: `${baseUrl}/signed-out-not-served` })}`,
    );
    await page.getByRole('heading', { name: 'Abmelden?' }).waitFor();
    await checkPage(page, 'logout');

    const started = await fetch(`${baseUrl}/api/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: device.clientId, scope: 'openid profile' }),
    });
    const { user_code: userCode } = (await started.json()) as { user_code: string };
    await page.goto(`${baseUrl}/device`);
    await page.getByRole('heading', { name: 'Gerät verbinden' }).waitFor();
    await checkPage(page, 'device');
    await page.getByLabel('Geben Sie den Code ein, den Ihr Gerät anzeigt').fill(userCode);
    await page.getByRole('button', { name: 'Weiter' }).click();
    await page.getByText('möchte auf Ihr Konto zugreifen').waitFor();
    await checkPage(page, 'device-confirm');
  } finally {
    await context.close();
  }
});

test('/login with another provider and /account with a linked sign-in, in German', async () => {
  const providerId = await makeIdentityProvider(t);
  const user = await makeUser(t);
  await t.db('user_identities').insert({
    id: randomUUID(),
    user_id: user.id,
    provider_id: providerId,
    issuer: 'https://github.com',
    subject: randomUUID(),
    email: user.email,
  });
  const context = await germanContext();
  const page = await context.newPage();
  try {
    await page.goto(`${baseUrl}/login`);
    await page.getByRole('link', { name: 'Weiter mit GitHub' }).waitFor();
    await checkPage(page, 'login-providers');
    await signInAs(page, user);
    await page.goto(`${baseUrl}/account`);
    await page.getByRole('heading', { name: 'Verknüpfte Anmeldungen' }).waitFor();
    await checkPage(page, 'account');
  } finally {
    await context.close();
  }
});

test('the administration console in German: overview, users, a user, an application form, the audit log', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'], firstName: 'Adelheid', lastName: 'Verwaltung' });
  const client = await makeClient(t, { name: 'Personalverwaltung' });
  const context = await germanContext();
  const page = await context.newPage();
  try {
    await signInAs(page, admin, 'Übersicht');
    await page.getByText('Anmeldungen der letzten 30 Tage').waitFor();
    await checkPage(page, 'console-overview');

    await page.getByRole('navigation', { name: 'Konsole' }).getByRole('link', { name: 'Benutzer' }).click();
    await page.getByLabel('E-Mail oder Name').fill(admin.email);
    await page.getByRole('button', { name: 'Suchen' }).click();
    await page.getByRole('table', { name: 'Benutzer, neueste zuerst' }).waitFor();
    await checkPage(page, 'console-users');
    await page.locator('#content').getByRole('link', { name: admin.email }).click();
    await page.getByRole('heading', { name: 'Zweite Faktoren' }).waitFor();
    await checkPage(page, 'console-user');

    await page.goto(`${baseUrl}/admin/applications/${encodeURIComponent(client.clientId)}`);
    await page.getByRole('button', { name: 'Client-ID kopieren' }).waitFor();
    await checkPage(page, 'console-application');

    await page.goto(`${baseUrl}/admin/webhooks/new`);
    await page.getByLabel('Endpunkt-URL').waitFor();
    await checkPage(page, 'console-webhook-form');

    await page.goto(`${baseUrl}/admin/identity-providers/new?kind=oidc`);
    await page.getByLabel('Kurzname (Slug)').waitFor();
    await checkPage(page, 'console-provider-form');

    await page.goto(`${baseUrl}/admin/audit`);
    await page.getByRole('link', { name: 'Diese Ereignisse als CSV herunterladen' }).waitFor();
    await checkPage(page, 'console-audit');
  } finally {
    await context.close();
  }
});
