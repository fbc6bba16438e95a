import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { bearerAt, checkConsolePage, newConsoleContext, signInAt } from '../helpers/console-browser';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import { makeRole } from '../helpers/rbac';
import type { TestApp } from '../helpers/test-app';

/**
 * The console's SCIM pages in Chromium (docs/scim.md): an admin creates a connection (the token shown once, used by
 * a directory), maps the group it pushes to a role chosen from the list, rotates the token and revokes the
 * connection, each change checked through the REST API; axe-core WCAG 2.1 AA on every page in both colour schemes at
 * 1280 and 320 px, in English and German. CONSOLE_SHOTS=<dir> writes a screenshot of each page.
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

async function call(pathname: string, auth: string, init: { method?: string; body?: unknown; type?: string } = {}) {
  const res = await fetch(`${baseUrl}${pathname}`, {
    method: init.method ?? 'GET',
    headers: { authorization: auth, 'content-type': init.type ?? 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

test('an admin connects a directory, maps its group to a role, rotates and revokes the token', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'] });
  const member = await makeUser(t);
  const role = await makeRole(t, { name: 'sales-readers', description: 'Reads users', permissions: ['users:read'] });
  const bearer = await bearerAt(baseUrl, admin.email, admin.password);
  const context = await newConsoleContext(browser);
  const page = await context.newPage();
  const check = (name: string) => checkConsolePage(page, name, SHOTS);
  try {
    await signInAt(page, baseUrl, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'SCIM' }).click();
    await page.getByText('No SCIM connections yet').waitFor();
    await check('scim-empty');

    await page.getByRole('link', { name: 'Create a connection' }).click();
    // Blank after trimming: the browser's `required` lets it through, the API's schema refuses it.
    await page.getByLabel('Name').fill('   ');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.locator('#f-name-error').waitFor();
    await page.locator('#error-summary').waitFor();
    await check('scim-new-error');
    await page.getByLabel('Name').fill('Microsoft Entra ID');
    await page.getByLabel('Description').fill('Contoso tenant, production');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('heading', { name: 'SCIM connection created' }).waitFor();
    await page.getByRole('button', { name: 'Copy bearer token' }).waitFor();
    const token = (await page.locator('#scim-token').textContent())!;
    expect(token).toMatch(/^scim_/);
    await check('scim-token');

    // The directory uses it: it pushes a group with one member.
    const pushed = await call('/scim/v2/Groups', `Bearer ${token}`, {
      method: 'POST',
      type: 'application/scim+json',
      body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Sales EMEA', members: [{ value: member.id }] },
    });
    expect(pushed.status).toBe(201);

    await page.getByRole('link', { name: /continue to the connection/ }).click();
    expect(await page.content()).not.toContain(token);
    await page.getByText('Last used').waitFor();
    await check('scim-connection');
    await page.goto(`${baseUrl}/admin/scim`);
    await check('scim-connections');

    // Groups: choose the role from the list.
    await page.getByRole('link', { name: 'Groups and their roles' }).click();
    await page.getByRole('cell', { name: 'Sales EMEA', exact: true }).waitFor();
    await check('scim-groups');
    await page.getByRole('link', { name: 'Edit roles of Sales EMEA' }).click();
    await check('scim-group-roles');
    await page.getByLabel('sales-readers').check();
    await page.getByRole('button', { name: 'Save roles' }).click();
    await page.getByRole('status').filter({ hasText: 'Roles of the group saved.' }).waitFor();
    const groups = (await call('/api/admin/scim-groups', bearer)).body.groups as Array<{ display_name: string; role_ids: string[] }>;
    expect(groups.find((g) => g.display_name === 'Sales EMEA')?.role_ids).toEqual([role.id]);

    // Rotate: asked first; the old token stops.
    await page.goto(`${baseUrl}/admin/scim`);
    await page.getByRole('link', { name: 'Microsoft Entra ID' }).click();
    await page.getByRole('button', { name: 'Rotate token' }).click();
    await page.getByRole('heading', { name: /Rotate the token of/ }).waitFor();
    await check('scim-rotate-confirm');
    await page.getByRole('button', { name: 'Rotate token' }).click();
    await page.getByRole('heading', { name: 'SCIM token rotated' }).waitFor();
    const next = (await page.locator('#scim-token').textContent())!;
    expect(next).not.toBe(token);
    expect((await call('/scim/v2/Users?count=1', `Bearer ${token}`)).status).toBe(401);
    expect((await call('/scim/v2/Users?count=1', `Bearer ${next}`)).status).toBe(200);

    // German pages are accessible too.
    const german = await context.newPage();
    await german.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
    await german.goto(`${baseUrl}/admin/scim`);
    await german.getByRole('heading', { name: 'SCIM-Bereitstellung' }).waitFor();
    await checkConsolePage(german, 'scim-connections-de', SHOTS);
    await german.goto(`${baseUrl}/admin/scim-groups`);
    await german.getByRole('heading', { name: 'SCIM-Gruppen' }).waitFor();
    await checkConsolePage(german, 'scim-groups-de', SHOTS);
    await german.close();

    // Revoke.
    await page.getByRole('link', { name: /continue to the connection/ }).click();
    await page.getByRole('button', { name: 'Revoke connection' }).click();
    await page.getByRole('heading', { name: /Revoke the SCIM connection/ }).waitFor();
    await page.getByRole('button', { name: 'Revoke connection' }).click();
    await page.getByRole('status').filter({ hasText: 'SCIM connection revoked.' }).waitFor();
    expect((await call('/api/admin/scim-connections', bearer)).body.connections).toEqual([]);
    expect((await call('/scim/v2/Users?count=1', `Bearer ${next}`)).status).toBe(401);
  } finally {
    await context.close();
  }
}, 300_000);
