import fs from 'node:fs';
import request from 'supertest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { checkConsolePage, newConsoleContext, signInAt } from '../helpers/console-browser';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeApiResource } from '../helpers/apps';
import { makeClient, makeSignedInUser, makeUser } from '../helpers/factories';
import { createListeningTestApp } from '../helpers/oauth';
import { makeRole } from '../helpers/rbac';
import type { TestApp } from '../helpers/test-app';

/**
 * Issue 32's console pages in Chromium, English and German: the role page (application from a list, API scopes as
 * checkboxes, a free-text application fixed, translated permission descriptions), "Role to assign" empty at first, the
 * API resource's role-based access. axe-core in both colour schemes at 1280 and 320 px; CONSOLE_SHOTS=<dir> writes
 * the screenshots.
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

async function signedIn(roles: string[] = ['super_admin']): Promise<{ context: BrowserContext; page: Page }> {
  const admin = await makeUser(t, { roles, firstName: 'Ada', lastName: 'Admin' });
  const context = await newConsoleContext(browser);
  const page = await context.newPage();
  await signInAt(page, baseUrl, admin.email, admin.password);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  return { context, page };
}

test('roles: the application from a list, API scopes as checkboxes, a free-text application fixed; in English and German', async () => {
  const client = await makeClient(t, { name: 'Billing Portal' });
  const api = await makeApiResource(t, { name: 'Invoices', scopes: ['invoices:read', 'invoices:write'], roleBasedAccess: true });
  const stray = await makeRole(t, { name: 'crm_agent', application: 'crm', description: 'Made before the list' });
  const { context, page } = await signedIn();
  try {
    await page.goto(`${baseUrl}/admin/roles/new`);
    await page.getByLabel('Name', { exact: true }).fill('invoice_clerk');
    await page.getByLabel('Application', { exact: true }).selectOption({ label: `Billing Portal (${client.clientId})` });
    await page
      .getByRole('group', { name: /Invoices/ })
      .getByLabel('invoices:read')
      .check();
    await page.getByLabel(/^users:read/).check();
    await checkConsolePage(page, 'role-new', SHOTS);
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('status').filter({ hasText: 'Role invoice_clerk created.' }).waitFor();
    const created = await t.db('roles').where({ name: 'invoice_clerk' }).first();
    expect(created.application).toBe(client.clientId);
    expect((await t.db('role_api_scopes').where({ role_id: created.id })).map((r: { scope: string }) => r.scope)).toEqual([
      'invoices:read',
    ]);
    expect(
      await page
        .getByRole('group', { name: /Invoices/ })
        .getByLabel('invoices:read')
        .isChecked(),
    ).toBe(true);
    await checkConsolePage(page, 'role-detail', SHOTS);

    // The role stored with a free-text application: said so, and re-pointed from the list.
    await page.goto(`${baseUrl}/admin/roles/${stray.id}`);
    await page.getByText('This role names the application "crm"').waitFor();
    expect(await page.getByLabel('Application', { exact: true }).inputValue()).toBe('crm');
    await checkConsolePage(page, 'role-free-text-application', SHOTS);
    await page.getByLabel('Application', { exact: true }).selectOption(client.clientId);
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByRole('status').filter({ hasText: 'Role saved.' }).waitFor();
    expect((await t.db('roles').where({ id: stray.id }).first()).application).toBe(client.clientId);
    expect(await page.getByText('not a registered application').count()).toBe(0);

    // German: labels, the permission descriptions and the built-in roles' descriptions are translated.
    await context.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
    await page.goto(`${baseUrl}/admin/roles/${created.id}`);
    await page.getByRole('heading', { name: /Rolle invoice_clerk/ }).waitFor();
    await page.getByText(/system:manage_users — Administratoren auflisten; das Audit-Protokoll lesen/).waitFor();
    await page.getByText('rollenbasierter Zugriff an').waitFor();
    await checkConsolePage(page, 'role-detail-de', SHOTS);
    await page.goto(`${baseUrl}/admin/roles`);
    await page.getByRole('cell', { name: 'Hat jede Berechtigung' }).waitFor();
    await checkConsolePage(page, 'roles-de', SHOTS);

    // The API resource's switch, in German.
    await page.goto(`${baseUrl}/admin/api-resources/${api.id}`);
    expect(await page.getByLabel('Rollenbasierter Zugriff').isChecked()).toBe(true);
    await page.getByLabel('Rollenbasierter Zugriff').uncheck();
    await page.getByRole('button', { name: 'API-Ressource speichern' }).click();
    await page.getByRole('status').waitFor();
    expect((await t.db('api_resources').where({ id: api.id }).first()).role_based_access).toBe(false);
    await checkConsolePage(page, 'api-resource-de', SHOTS);
  } finally {
    await context.close();
  }
}, 240_000);

test('"Role to assign" starts empty, and the browser asks for a choice before posting', async () => {
  const member = await makeUser(t, { firstName: 'Mia', lastName: 'Member' });
  const { context, page } = await signedIn();
  try {
    await page.goto(`${baseUrl}/admin/users/${member.id}`);
    expect(await page.getByLabel('Role to assign').inputValue()).toBe('');
    await page.getByRole('button', { name: 'Assign role' }).click();
    // The required select keeps the form from being sent: no role, no flash.
    expect(await page.getByLabel('Role to assign').evaluate((el) => (el as HTMLSelectElement).validity.valueMissing)).toBe(true);
    expect(await t.db('user_roles').where({ user_id: member.id })).toEqual([]);
    await page.getByLabel('Role to assign').selectOption({ label: 'manager' });
    await page.getByRole('button', { name: 'Assign role' }).click();
    await page.getByRole('status').filter({ hasText: 'Role manager assigned.' }).waitFor();
    await context.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
    await page.reload();
    expect(await page.getByLabel('Zuzuweisende Rolle').inputValue()).toBe('');
    await checkConsolePage(page, 'user-detail-de', SHOTS);
  } finally {
    await context.close();
  }
}, 120_000);

test('the audit log by name: people, applications, labelled details and the grouped type filter, in English and German', async () => {
  const person = await makeUser(t, { firstName: 'Mia', lastName: 'Member' });
  const client = await makeClient(t, { name: 'Billing Portal' });
  const { context, page } = await signedIn();
  try {
    const admin = await t.db('users').where({ first_name: 'Ada' }).orderBy('created_at', 'desc').first();
    await t.ctx.events.record(t.db, {
      type: 'role.assigned',
      actorId: admin.id,
      subjectId: person.id,
      clientId: client.clientId,
      detail: { role: 'manager', application: null, scopes: ['openid', 'email'] },
    });
    await page.goto(`${baseUrl}/admin/audit`);
    // The filter offers stored types only, grouped.
    const groups = await page.locator('#f-type optgroup').evaluateAll((els) => els.map((g) => g.getAttribute('label')));
    expect(groups).toContain('Roles');
    expect(await page.locator('#f-type option[value="saml.slo"]').count()).toBe(0);
    await page.getByLabel('Type').selectOption('role.assigned');
    await page.getByRole('button', { name: 'Filter' }).click();
    const row = page.getByRole('row').filter({ hasText: 'role.assigned' }).first();
    await row.getByRole('link', { name: /Ada Admin/ }).waitFor();
    await row.getByRole('link', { name: /Mia Member/ }).waitFor();
    await row.getByRole('link', { name: 'Billing Portal' }).waitFor();
    expect(await row.locator('dl.detail dt').allTextContents()).toEqual(expect.arrayContaining(['Role', 'Application', 'Scopes']));
    await checkConsolePage(page, 'audit', SHOTS);

    await context.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
    await page.reload();
    await page.getByRole('heading', { name: 'Audit-Protokoll' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'role.assigned' }).first().locator('dl.detail dt').allTextContents()).toEqual(
      expect.arrayContaining(['Rolle', 'Anwendung', 'Scopes']),
    );
    await checkConsolePage(page, 'audit-de', SHOTS);
    await page.goto(`${baseUrl}/admin/users/${person.id}`);
    await page
      .getByRole('link', { name: /Ada Admin/ })
      .first()
      .waitFor();
    await checkConsolePage(page, 'user-events-de', SHOTS);
  } finally {
    await context.close();
  }
}, 180_000);

test('a settings change in the audit log reads name, before and after, in English and German', async () => {
  const changer = await makeSignedInUser(t, ['super_admin']);
  const patched = await request(t.app).patch('/api/admin/settings').set('Authorization', changer.bearer).send({ invitation_ttl_hours: 48 });
  expect(patched.status).toBe(200);
  const { context, page } = await signedIn();
  try {
    for (const [language, title, said] of [
      ['en', 'Audit log', 'Name: invitation_ttl_hours; Before: 72; After: 48'],
      ['de', 'Audit-Protokoll', 'Name: invitation_ttl_hours; Vorher: 72; Nachher: 48'],
    ] as const) {
      await context.setExtraHTTPHeaders({ 'Accept-Language': language });
      await page.goto(`${baseUrl}/admin/audit?type=settings.changed`);
      await page.getByRole('heading', { name: title }).waitFor();
      const row = page.getByRole('row').filter({ hasText: 'settings.changed' }).first();
      expect(await row.locator('dl.detail dd').first().textContent()).toBe(said);
      await checkConsolePage(page, `audit-settings-${language}`, SHOTS);
    }
  } finally {
    await context.close();
  }
}, 120_000);

test("invited in the user list and resent from the person's page (its events by name), en and de; the new-role form in German", async () => {
  const invited = await makeUser(t, { firstName: 'Ivy', lastName: 'Invited' });
  await t
    .db('users')
    .where({ id: invited.id })
    .update({ password_hash: null, invitation_expires_at: new Date(Date.now() + 72 * 3600_000) });
  const { context, page } = await signedIn();
  const said = {
    en: { status: 'Invited', resend: 'Resend invitation', resent: `Invitation sent again to ${invited.email}.` },
    de: { status: 'Eingeladen', resend: 'Einladung erneut senden', resent: `Einladung erneut an ${invited.email} gesendet.` },
  };
  try {
    for (const language of ['en', 'de'] as const) {
      await context.setExtraHTTPHeaders({ 'Accept-Language': language });
      await page.goto(`${baseUrl}/admin/users`);
      const row = page.getByRole('row').filter({ hasText: invited.email });
      expect((await row.locator('.badge.invited').textContent())?.trim()).toBe(said[language].status);
      await checkConsolePage(page, `users-invited-${language}`, SHOTS);

      const before = t.mails.length;
      await page.goto(`${baseUrl}/admin/users/${invited.id}`);
      await page.getByRole('button', { name: said[language].resend }).click();
      await page.getByRole('status').filter({ hasText: said[language].resent }).waitFor();
      expect(t.mails.length).toBe(before + 1);
      expect(t.mails[t.mails.length - 1]!.to).toBe(invited.email);
      // The resend is among the person's events, its actor by name.
      await page
        .locator('#content')
        .getByRole('link', { name: /Ada Admin/ })
        .first()
        .waitFor();
      await checkConsolePage(page, `user-invitation-resent-${language}`, SHOTS);
    }

    // The new-role form in German (English: the roles test above).
    await page.goto(`${baseUrl}/admin/roles/new`);
    await page.getByRole('heading', { name: 'Rolle erstellen', level: 1 }).waitFor();
    await checkConsolePage(page, 'role-new-de', SHOTS);
  } finally {
    await context.close();
  }
}, 120_000);
