import fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { bearerAt, checkConsolePage, newConsoleContext, signInAt } from '../helpers/console-browser';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeClient, makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * The administration console in Chromium (CONTRACT §14): an admin's journey through every page, checked through the
 * REST API; a manager's; axe-core WCAG 2.1 AA on every page in the light and dark colour schemes at 1280 and 320 px;
 * the keyboard alone. CONSOLE_SHOTS=<dir> also writes a screenshot of each page at both widths.
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

const checkPage = (page: Page, name: string) => checkConsolePage(page, name, SHOTS);
const newContext = () => newConsoleContext(browser);
const signIn = (page: Page, email: string, password: string) => signInAt(page, baseUrl, email, password);
const bearerOf = (email: string, password: string) => bearerAt(baseUrl, email, password);

async function api(pathname: string, bearer: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${baseUrl}${pathname}`, { headers: { authorization: bearer } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

test('an admin signs in, lands in the console and manages users, roles, applications, audit, keys and settings', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'], firstName: 'Ada', lastName: 'Admin' });
  const member = await makeUser(t, { firstName: 'Mia', lastName: 'Member', email: `mia-${Date.now()}@example.test` });
  await makeClient(t, { name: 'Existing App' });
  const bearer = await bearerOf(admin.email, admin.password);
  const context = await newContext();
  const page = await context.newPage();
  try {
    await signIn(page, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/admin');
    await checkPage(page, 'overview');

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Users' }).click();
    await page.getByLabel('Email or name').fill('mia-');
    await page.getByRole('button', { name: 'Search' }).click();
    await checkPage(page, 'users');
    await page.getByRole('link', { name: member.email }).click();
    await page.getByRole('heading', { name: 'Mia Member' }).waitFor();
    await checkPage(page, 'user-detail');

    await page.getByLabel('First name').fill('Mila');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Profile saved.' }).waitFor();
    expect(((await api(`/api/users/${member.id}`, bearer)).body.user as { first_name: string }).first_name).toBe('Mila');

    await page.getByLabel('Role to assign').selectOption({ label: 'manager' });
    await page.getByRole('button', { name: 'Assign role' }).click();
    await page.getByRole('status').filter({ hasText: 'Role manager assigned.' }).waitFor();
    expect(
      ((await api(`/api/users/${member.id}`, bearer)).body.user as { roles: Array<{ name: string }> }).roles.map((r) => r.name),
    ).toEqual(['manager']);

    await page.getByRole('button', { name: 'Deactivate' }).click();
    await page.getByRole('heading', { name: `Deactivate ${member.email}?` }).waitFor();
    await checkPage(page, 'confirm');
    await page.getByRole('button', { name: 'Deactivate' }).click();
    await page.getByRole('status').filter({ hasText: 'User deactivated' }).waitFor();
    expect(((await api(`/api/users/${member.id}`, bearer)).body.user as { is_active: boolean }).is_active).toBe(false);

    await page.goto(`${baseUrl}/admin/roles`);
    await checkPage(page, 'roles');
    await page.getByRole('link', { name: 'Create a role' }).click();
    await page.getByLabel('Name').fill('billing_reader');
    await page.getByLabel(/^users:read/).check();
    await checkPage(page, 'role-new');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('status').filter({ hasText: 'Role billing_reader created.' }).waitFor();
    const roles = (await api('/api/rbac/roles', bearer)).body.roles as Array<{ name: string; permissions: string[] }>;
    expect(roles.find((r) => r.name === 'billing_reader')?.permissions).toEqual(['users:read']);

    await page.goto(`${baseUrl}/admin/applications`);
    await checkPage(page, 'applications');
    await page.getByRole('link', { name: 'Create an application' }).click();
    // The chooser asks what the application is; "Something else" is the form with every option.
    await page.getByRole('link', { name: 'Something else', exact: true }).click();
    await page.getByLabel('Name').fill('Billing');
    await page.getByLabel('Redirect URIs', { exact: true }).fill('https://billing.test/callback');
    await checkPage(page, 'application-new');
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByRole('heading', { name: 'Application Billing created' }).waitFor();
    // The copy buttons appear with JavaScript (clipboard needs a secure context: 127.0.0.1 is one).
    await page.getByRole('button', { name: 'Copy client secret' }).waitFor();
    await checkPage(page, 'application-secret');
    const clientId = (await page.locator('#client-id').textContent())!;
    const secret = (await page.locator('#client-secret').textContent())!;
    const token = await fetch(`${baseUrl}/api/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      },
      body: 'grant_type=refresh_token&refresh_token=not-a-token',
    });
    // The client authenticated (the grant is refused, not the client).
    expect(((await token.json()) as { error: string }).error).toBe('invalid_grant');
    const clients = (await api('/api/admin/oauth-clients', bearer)).body.clients as Array<{ client_id: string; redirect_uris: string[] }>;
    expect(clients.find((c) => c.client_id === clientId)?.redirect_uris).toEqual(['https://billing.test/callback']);
    await page.getByRole('link', { name: /continue to the application/ }).click();
    expect(await page.content()).not.toContain(secret);
    await checkPage(page, 'application-detail');

    await page.goto(`${baseUrl}/admin/audit`);
    await page.getByLabel('Type').selectOption('user.deactivated');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('cell', { name: 'user.deactivated' }).first().waitFor();
    await checkPage(page, 'audit');
    await page.goto(`${baseUrl}/admin/signing-keys`);
    await checkPage(page, 'signing-keys');
    await page.goto(`${baseUrl}/admin/settings`);
    await checkPage(page, 'settings');
  } finally {
    await context.close();
  }
}, 240_000);

test('by keyboard alone: skip link, navigation and a search', async () => {
  const admin = await makeUser(t, { roles: ['admin'] });
  const context = await newContext();
  const page = await context.newPage();
  try {
    await signIn(page, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('content');
    await page.goto(`${baseUrl}/admin`);
    // Tab to the Users link of the navigation and follow it.
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate(() => document.activeElement?.textContent)) === 'Users') break;
    }
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate(() => document.activeElement?.id)) === 'f-q') break;
    }
    await page.keyboard.type(admin.email);
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=/);
    await page.locator('#content').getByRole('link', { name: admin.email }).waitFor();
    // The control reached by Tab shows a focus outline.
    await page.keyboard.press('Tab');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle);
    expect(outline).toBe('solid');
  } finally {
    await context.close();
  }
}, 120_000);

test('a manager works on users and is shown a 403 page where the API refuses a manager', async () => {
  const manager = await makeUser(t, { roles: ['manager'] });
  const member = await makeUser(t, { firstName: 'Noa', lastName: 'Member' });
  const bearer = await bearerOf(manager.email, manager.password);
  const context = await newContext();
  const page = await context.newPage();
  try {
    await signIn(page, manager.email, manager.password);
    await page.goto(`${baseUrl}/admin/users/${member.id}`);
    await page.getByLabel('Last name').fill('Renamed');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Profile saved.' }).waitFor();
    expect(((await api(`/api/users/${member.id}`, bearer)).body.user as { last_name: string }).last_name).toBe('Renamed');
    const refused = await page.goto(`${baseUrl}/admin/applications`);
    expect(refused?.status()).toBe(403);
    expect((await api('/api/admin/oauth-clients', bearer)).status).toBe(403);
    await checkPage(page, 'forbidden');
  } finally {
    await context.close();
  }
}, 120_000);

test('a signed-in non-admin gets the 403 page; a browser not signed in goes to the sign-in page and back', async () => {
  const user = await makeUser(t);
  const context = await newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${baseUrl}/admin/users`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/admin/users');
  } finally {
    await context.close();
  }
}, 60_000);
