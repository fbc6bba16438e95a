import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { bearerAt, checkConsolePage, newConsoleContext, signInAt } from '../helpers/console-browser';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

/**
 * The console's pages of applications of every kind, API resources, identity providers and webhooks in Chromium
 * (CONTRACT §14): an admin's journey with each change checked through the REST API; axe-core WCAG 2.1 AA on every page
 * in both colour schemes at 1280 and 320 px; a manager refused. CONSOLE_SHOTS=<dir> writes a screenshot of each page.
 */
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;
let receiver: WebhookReceiver;
const SHOTS = process.env.CONSOLE_SHOTS;

beforeAll(async () => {
  ({ t, baseUrl, stop: stopApp } = await createListeningTestApp());
  browser = await launchChromium();
  receiver = await startWebhookReceiver();
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await stopApp?.();
});

async function api(pathname: string, bearer: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${baseUrl}${pathname}`, {
    method: init.method ?? 'GET',
    headers: { authorization: bearer, 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

test('an admin registers an API, a public app allowed to use it, a GitHub sign-in and a webhook', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'] });
  const bearer = await bearerAt(baseUrl, admin.email, admin.password);
  const context = await newConsoleContext(browser);
  const page = await context.newPage();
  const check = (name: string) => checkConsolePage(page, name, SHOTS);
  try {
    await signInAt(page, baseUrl, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();

    // API resources
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'API resources' }).click();
    await page.getByText('No API resources yet').waitFor();
    await check('resources-empty');
    await page.getByRole('link', { name: 'Register an API' }).click();
    await page.getByLabel('Identifier').fill('https://invoices.example.test/');
    await page.getByLabel('Name').fill('Invoices');
    await page.getByLabel('Scopes').fill('invoices:read invoices:write');
    await check('resource-new');
    await page.getByRole('button', { name: 'Register API' }).click();
    await page.getByRole('status').filter({ hasText: 'API resource Invoices registered.' }).waitFor();
    await check('resource-detail');
    const resources = (await api('/api/admin/api-resources', bearer)).body.resources as Array<{ identifier: string; scopes: string[] }>;
    expect(resources.find((r) => r.identifier === 'https://invoices.example.test/')?.scopes).toEqual(['invoices:read', 'invoices:write']);
    await page.goto(`${baseUrl}/admin/api-resources`);
    await check('resources');

    // A public application (single-page app) allowed the API
    await page.goto(`${baseUrl}/admin/applications/new?preset=custom`);
    await page.getByLabel('Name').fill('Invoices SPA');
    await page.getByRole('radio', { name: /^Public/ }).check();
    await page.getByLabel('Redirect URIs', { exact: true }).fill('https://spa.example.test/callback');
    await page.getByLabel(/^Invoices — /).check();
    await check('application-new');
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByRole('heading', { name: 'Application Invoices SPA created' }).waitFor();
    expect(await page.locator('#client-secret').count()).toBe(0);
    await check('application-public-created');
    const clientId = (await page.locator('#client-id').textContent())!;
    expect((await api(`/api/admin/oauth-clients/${clientId}`, bearer)).body.client).toMatchObject({
      type: 'public',
      allowed_resources: ['https://invoices.example.test/'],
    });
    await page.getByRole('link', { name: 'Continue to the application' }).click();
    await check('application-public-detail');
    await page.goto(`${baseUrl}/admin/applications`);
    await check('applications');

    // Identity providers
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Identity providers' }).click();
    await page.getByText('No identity providers yet').waitFor();
    await check('providers-empty');
    await page.getByRole('link', { name: 'Add a provider' }).click();
    await check('provider-kinds');
    await page.getByRole('link', { name: 'GitHub' }).click();
    await page.getByLabel('Client ID').fill('Iv1.browser');
    await page.getByLabel('Client secret').fill('browser-github-secret');
    await check('provider-new-github');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('status').filter({ hasText: 'Identity provider GitHub added.' }).waitFor();
    expect(await page.content()).not.toContain('browser-github-secret');
    await check('provider-detail');
    const providers = (await api('/api/admin/identity-providers', bearer)).body.providers as Array<{
      slug: string;
      has_client_secret: boolean;
    }>;
    expect(providers.find((p) => p.slug === 'github')?.has_client_secret).toBe(true);
    await page.goto(`${baseUrl}/admin/identity-providers/new?kind=oidc`);
    await check('provider-new-oidc');
    await page.goto(`${baseUrl}/admin/identity-providers`);
    await check('providers');

    // Webhooks
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No webhooks yet').waitFor();
    await check('webhooks-empty');
    await page.getByRole('link', { name: 'Create a webhook' }).click();
    await page.getByLabel('Endpoint URL').fill('ftp://nope.example.test/');
    await page.getByLabel('Events', { exact: true }).fill('user.*');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.locator('#f-url-error').waitFor();
    await check('webhook-new-error');
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Description').fill('CRM sync');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('heading', { name: 'Webhook created' }).waitFor();
    await page.getByRole('button', { name: 'Copy signing secret' }).waitFor();
    const secret = (await page.locator('#webhook-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await check('webhook-secret');
    const hooks = (await api('/api/admin/webhooks', bearer)).body.webhooks as Array<{ id: string; url: string; description: string }>;
    const hook = hooks.find((h) => h.url === receiver.url)!;
    expect(hook.description).toBe('CRM sync');
    await page.getByRole('link', { name: /continue to the webhook/ }).click();
    expect(await page.content()).not.toContain(secret);
    await check('webhook-detail');
    await api('/api/users', bearer, {
      method: 'POST',
      body: { email: `hooked-${Date.now()}@example.test`, first_name: 'Hoo', last_name: 'Ked' },
    });
    await page.getByRole('link', { name: 'Deliveries of this webhook' }).click();
    await page.getByRole('cell', { name: 'user.created', exact: true }).waitFor();
    await check('webhook-deliveries');
    await page.getByRole('button', { name: /^Redeliver user.created/ }).click();
    await page.getByRole('status').filter({ hasText: 'queued again' }).waitFor();
    await page.goto(`${baseUrl}/admin/webhooks`);
    await check('webhooks');

    // A destructive action asks first; cancelling changes nothing.
    await page.goto(`${baseUrl}/admin/webhooks/${hook.id}`);
    await page.getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByRole('heading', { name: /Delete the webhook/ }).waitFor();
    await check('webhook-delete-confirm');
    await page.getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByRole('status').filter({ hasText: 'Webhook deleted.' }).waitFor();
    expect((await api(`/api/admin/webhooks/${hook.id}`, bearer)).status).toBe(404);
  } finally {
    await context.close();
  }
}, 300_000);

test('a manager is shown the 403 page on the new sections, as the API refuses a manager', async () => {
  const manager = await makeUser(t, { roles: ['manager'] });
  const bearer = await bearerAt(baseUrl, manager.email, manager.password);
  const context = await newConsoleContext(browser);
  const page = await context.newPage();
  try {
    await signInAt(page, baseUrl, manager.email, manager.password);
    await page.getByRole('heading').first().waitFor();
    for (const [pagePath, apiPath] of [
      ['/admin/api-resources', '/api/admin/api-resources'],
      ['/admin/identity-providers', '/api/admin/identity-providers'],
      ['/admin/webhooks', '/api/admin/webhooks'],
    ]) {
      const res = await page.goto(`${baseUrl}${pagePath}`);
      expect([pagePath, res?.status()]).toEqual([pagePath, 403]);
      await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
      expect((await api(apiPath!, bearer)).status).toBe(403);
    }
  } finally {
    await context.close();
  }
}, 120_000);
