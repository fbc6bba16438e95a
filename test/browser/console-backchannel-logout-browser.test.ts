import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { startWebhookWorker, type WebhookWorker } from '../../src/services/webhooks/queue';
import { startLogoutReceiver, type LogoutReceiver } from '../helpers/backchannel';
import { bearerAt, checkConsolePage, newConsoleContext, signInAt } from '../helpers/console-browser';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeUser, signIn } from '../helpers/factories';
import { createListeningTestApp, issueOAuthTokens } from '../helpers/oauth';
import type { TestApp } from '../helpers/test-app';

/**
 * Back-channel logout in the console, in Chromium (issue 34, docs/backchannel-logout.md): the address and the `sid`
 * flag in a web application's form, a refused address shown beside its field in the API's words, and the application's
 * page listing real deliveries (one delivered, one failed after its retries), in English and German; axe-core WCAG 2.1
 * AA in both colour schemes at 1280 and 320 px. CONSOLE_SHOTS=<dir> writes screenshots.
 */
const SHOTS = process.env.CONSOLE_SHOTS;
let t: TestApp;
let baseUrl: string;
let stopApp: () => Promise<void>;
let browser: Browser;
let worker: WebhookWorker;
let receiver: LogoutReceiver;

beforeAll(async () => {
  ({ t, baseUrl, stop: stopApp } = await createListeningTestApp());
  worker = await startWebhookWorker(t.ctx, { connectionString: t.databaseUrl, retryDelaysSeconds: [0.2], pollIntervalMs: 100 });
  receiver = await startLogoutReceiver({
    issuer: t.config.oidcIssuer,
    jwks: async () => (await request(t.app).get('/api/oauth/jwks')).body,
  });
  browser = await launchChromium();
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await receiver?.close();
  await stopApp?.();
});

/** A person signs in to the application through this server and signs out here: one delivery. */
async function signInAndOut(client: { clientId: string; clientSecret: string }) {
  const person = await makeUser(t);
  const s = await signIn(t, person);
  await issueOAuthTokens(t, s.agent, { ...client, id: client.clientId, redirectUris: ['https://reports.example.com/callback'] } as never);
  await request(t.app).post('/api/auth/logout').set('Authorization', `Bearer ${s.accessToken}`).expect(200);
}

async function settled(clientId: string, n: number) {
  for (let i = 0; i < 200; i++) {
    const rows = await t.db('backchannel_logout_deliveries').where({ client_id: clientId }).whereNot({ status: 'pending' });
    if (rows.length >= n) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('deliveries did not settle');
}

test('an admin sets the back-channel logout URL in the form and reads the deliveries on the application page', async () => {
  const admin = await makeUser(t, { roles: ['super_admin'], firstName: 'Ada', lastName: 'Admin' });
  const context = await newConsoleContext(browser);
  const page = await context.newPage();
  try {
    await signInAt(page, baseUrl, admin.email, admin.password);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();

    // A web app's form: a plain-http address elsewhere than this machine is refused, beside the field.
    await page.goto(`${baseUrl}/admin/applications/new?preset=web`);
    await page.getByLabel('Name', { exact: true }).fill('Reports');
    await page.getByLabel('Redirect URIs', { exact: true }).fill('https://reports.example.com/callback');
    const uriField = page.getByLabel('Back-channel logout URL (backchannel_logout_uri)');
    await uriField.fill('http://reports.example.com/backchannel-logout');
    await page.getByLabel('The application needs the session id (sid) in logout tokens').check();
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.locator('#f-backchannel_logout_uri-error').waitFor();
    expect(await page.locator('#f-backchannel_logout_uri-error').textContent()).toContain(
      'backchannel_logout_uri must be an https URL (http only to a loopback host)',
    );
    expect(await uriField.getAttribute('aria-invalid')).toBe('true');
    expect(await uriField.inputValue()).toBe('http://reports.example.com/backchannel-logout');
    await checkConsolePage(page, 'bcl-form-refused-en', SHOTS);

    // Corrected: created, with both settings.
    await uriField.fill(receiver.url);
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.locator('#client-id').waitFor();
    const clientId = (await page.locator('#client-id').textContent())!.trim();
    const clientSecret = (await page.locator('#client-secret').textContent())!.trim();
    expect(await t.db('oauth_clients').where({ client_id: clientId }).first()).toMatchObject({
      backchannel_logout_uri: receiver.url,
      backchannel_logout_session_required: true,
    });

    // Two people sign in to it and out here; the second logout token is refused by the application (500) until the
    // retries are spent.
    receiver.answer = () => 200;
    await signInAndOut({ clientId, clientSecret });
    await settled(clientId, 1);
    receiver.answer = () => 500;
    await signInAndOut({ clientId, clientSecret });
    await settled(clientId, 2);
    receiver.answer = () => 200;

    await page.goto(`${baseUrl}/admin/applications/${encodeURIComponent(clientId)}`);
    const section = page.getByRole('region', { name: 'Recent back-channel logout deliveries' });
    await section.waitFor();
    const rows = section.getByRole('row');
    expect(await rows.count()).toBe(3);
    await expect(rows.nth(1).textContent()).resolves.toMatch(/Failed.*2.*HTTP 500/);
    await expect(rows.nth(2).textContent()).resolves.toMatch(/Delivered.*1.*HTTP 200/);
    expect(await page.getByLabel('Back-channel logout URL (backchannel_logout_uri)').inputValue()).toBe(receiver.url);
    await checkConsolePage(page, 'bcl-application-en', SHOTS);

    // German.
    await context.setExtraHTTPHeaders({ 'Accept-Language': 'de' });
    await page.reload();
    const deSection = page.getByRole('region', { name: 'Letzte Back-Channel-Logout-Zustellungen' });
    await deSection.waitFor();
    await expect(deSection.getByRole('row').nth(1).textContent()).resolves.toMatch(/Fehlgeschlagen/);
    await expect(deSection.getByRole('row').nth(2).textContent()).resolves.toMatch(/Zugestellt/);
    await checkConsolePage(page, 'bcl-application-de', SHOTS);

    await page.getByLabel('Back-Channel-Logout-URL (backchannel_logout_uri)').fill('https://127.0.0.1/logout#fragment');
    await page.getByRole('button', { name: 'Anwendung speichern' }).click();
    await page.locator('#f-backchannel_logout_uri-error').waitFor();
    await checkConsolePage(page, 'bcl-form-refused-de', SHOTS);
    expect((await t.db('oauth_clients').where({ client_id: clientId }).first()).backchannel_logout_uri).toBe(receiver.url);
    // The refused address was not saved, so the admin API's view is unchanged.
    const bearer = await bearerAt(baseUrl, admin.email, admin.password);
    const listed = await request(t.app)
      .get(`/api/admin/oauth-clients/${clientId}/backchannel-logout-deliveries`)
      .set('Authorization', bearer);
    expect(listed.body.deliveries.map((d: { status: string }) => d.status)).toEqual(['failed', 'delivered']);
  } finally {
    await context.close();
  }
}, 120_000);
