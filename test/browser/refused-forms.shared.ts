import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { listDeclaredRoutes } from '../../src/routes/route-table';
import { ensureSetupLink } from '../../src/services/setup.service';
import { axeViolations } from '../helpers/accessibility';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeClient, makeSignedInUser, makeUser } from '../helpers/factories';
import { enrolTotp, nextStep, totpCode } from '../helpers/mfa';
import { createListeningTestApp } from '../helpers/oauth';
import { makeRole } from '../helpers/rbac';
import type { TestApp } from '../helpers/test-app';

/**
 * The refused-forms browser checks, shared by refused-forms-browser-a/b.test.ts (each runs half of the form cases, so
 * that the two CI workers share the slowest suite).
 *
 * CONTRACT §18, every form of the pages and the console (the route table's HTML form posts, so that a new form cannot
 * be left out): a refused submission, in Chromium, in English and German, comes back with
 * - a title starting with the translated "Error",
 * - an error summary at the top that has the focus and links to each refused field (a link moves the focus there),
 * - each message beside its field (aria-describedby), in the page's language (the German differs from the English),
 * - the values as entered, never a password or a secret,
 * - and passes axe-core (WCAG 2.1 AA), in English light at 1280 px, in German dark at 320 px (with SHOTS=<directory> set, a screenshot
 *   of each is written there to look at; CI takes none, full-page screenshots were a third of the suite's time).
 * A form made of buttons alone (sign out, revoke, delete, rotate) has nothing to refuse field by field: it is listed
 * with why, and a refusal of it is its page's flash.
 */

const SHOTS = process.env.SHOTS;
if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true });

/** Declares the suite's hooks and the cases of one shard (`index` of `of`). */
export function refusedFormTests(shard: { index: number; of: number }): void {
  let t: TestApp;
  let baseUrl: string;
  let stopApp: () => Promise<void>;
  let browser: Browser;
  let setupLink: string;
  /**
   * One browser context and one tab per language for the whole suite: each case starts with no cookies, in the light
   * scheme at 1280 px, on a page it loads itself. A new context per case and language started a new renderer each
   * time (a third of the suite's browser work) and made axe-core compile afresh on every page; the tab kept, the
   * renderer and its compiled scripts are reused.
   */
  const tabs = new Map<string, { context: BrowserContext; page: Page }>();

  const LANGUAGES = [
    { locale: 'en-GB', error: /^Error: /, summary: 'There is a problem' },
    { locale: 'de-DE', error: /^Fehler: /, summary: 'Es gibt ein Problem' },
  ] as const;

  beforeAll(async () => {
    ({ t, baseUrl, stop: stopApp } = await createListeningTestApp({ REGISTRATION: 'open' }));
    // The first-run link lives while no administrator exists: taken before any is made (the setup case runs first).
    setupLink = (await ensureSetupLink(t.ctx))!;
    browser = await launchChromium();
    for (const l of LANGUAGES) {
      const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 }, locale: l.locale });
      tabs.set(l.locale, { context, page: await context.newPage() });
    }
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopApp?.();
  });

  interface Who {
    email: string;
    password: string;
    /** Signs in with this TOTP secret as the second step. */
    totpSecret?: string;
  }

  /** A form with fields: how to reach it, what to type, what the summary must link to, what must come back. */
  interface FieldsCase {
    /** Who is signed in (nobody when undefined). */
    who?: () => Promise<Who>;
    /**
     * The page with the form, made per case after the sign-in (it may create what the form edits); `{id}` in the other
     * fields is replaced by `id` when it returns one (a passkey's id in its rename field's name).
     */
    open: (who: Who | undefined) => Promise<string | { url: string; id: string }>;
    /** The form's action (`{page}`: the path opened), a query string aside. */
    form: string;
    /** Values typed, by input id (a checkbox: 'check' / 'uncheck'); `evaluate`: anything the browser would not let through. */
    fill: Record<string, string>;
    evaluate?: (form: HTMLFormElement) => void;
    /** The input ids the summary links to, in order (`_form` entries have no link). */
    links: string[];
    /** Values that must come back as entered, by input id ('' for a password or secret). */
    kept?: Record<string, string>;
  }

  interface ButtonsCase {
    buttons: string;
  }

  type Case = FieldsCase | ButtonsCase;

  const buttons = (why: string): ButtonsCase => ({ buttons: why });

  let adminOf: Promise<Awaited<ReturnType<typeof makeSignedInUser>>> | undefined;
  /** The console's administrator (made once, after the setup case). */
  const admin = () => (adminOf ??= makeSignedInUser(t, ['super_admin']));
  const api = async () => {
    const a = await admin();
    return {
      post: (url: string, body: object) => request(t.app).post(url).set('Authorization', a.bearer).send(body),
    };
  };
  const adminWho = async (): Promise<Who> => {
    const a = await admin();
    return { email: a.user.email, password: a.user.password };
  };
  const person = async (): Promise<Who> => {
    const u = await makeUser(t);
    return { email: u.email, password: u.password };
  };
  /** A person with TOTP (the second step, removing it, new recovery codes). */
  const personWithTotp = async (): Promise<Who> => {
    const u = await makeSignedInUser(t);
    const { secret } = await enrolTotp(t, u.agent);
    return { email: u.user.email, password: u.user.password, totpSecret: secret };
  };
  const userIdOf = async (email: string) => ((await t.db('users').where({ email }).first('id')) as { id: string }).id;

  const CASES: Record<string, Case> = {
    // ——— the hosted pages ———
    'POST /setup': {
      open: async () => new URL(setupLink).pathname + new URL(setupLink).search,
      form: '/setup',
      fill: {
        email: 'not-an-address',
        first_name: 'Ada',
        last_name: 'Lovelace',
        password: 'first-password',
        password_confirm: 'first-password',
      },
      links: ['email'],
      kept: { email: 'not-an-address', first_name: 'Ada', last_name: 'Lovelace', password: '', password_confirm: '' },
    },
    'POST /login': {
      open: async () => '/login',
      form: '/login',
      fill: { email: 'nobody@example.test', password: 'wrong-password' },
      links: ['email'],
      kept: { email: 'nobody@example.test', password: '' },
    },
    'POST /logout': buttons('Sign out: one button'),
    'POST /consent': buttons('Allow or Deny: two buttons'),
    'POST /login/mfa': {
      open: async () => '/login',
      form: '/login/mfa',
      fill: { code: '000000' },
      links: ['code'],
      kept: { code: '' },
    },
    'POST /login/passkey': {
      open: async () => '/login',
      form: '/login/passkey',
      fill: {},
      evaluate: (f) => ((f.elements.namedItem('response') as HTMLInputElement).value = '{"id":"forged"}'),
      links: ['_form'],
    },
    'POST /login/link': buttons('Link or Cancel a pending identity: two buttons'),
    'POST /account/profile': {
      who: person,
      open: async () => '/account',
      form: '/account/profile',
      fill: { first_name: '   ', last_name: 'Hopper' },
      links: ['first_name'],
      kept: { last_name: 'Hopper' },
    },
    'POST /account/password': {
      who: person,
      open: async () => '/account',
      form: '/account/password',
      fill: { current_password: 'not-my-password', new_password: 'a-new-password-1', new_password_confirm: 'a-new-password-1' },
      links: ['current_password'],
      kept: { current_password: '', new_password: '', new_password_confirm: '' },
    },
    'POST /account/sessions/revoke': buttons('Sign out a session: one button per session'),
    'POST /account/sessions/revoke-others': buttons('Sign out everywhere else: one button'),
    'POST /account/identities/link': buttons('Connect or confirm a provider: one button each'),
    'POST /account/identities/remove': buttons('Unlink: one button per identity'),
    'POST /account/apps/remove': buttons('Disconnect an app: one button per app'),
    'POST /account/verification/resend': buttons('Send the confirmation again: one button'),
    'POST /account/totp/setup': buttons('Start the authenticator set-up: one button (the password only past 10 minutes)'),
    'POST /account/totp/confirm': {
      who: person,
      open: async () => '/account',
      form: '/account/totp/confirm',
      fill: { totp_code: '000000' },
      links: ['totp_code'],
      kept: { totp_code: '' },
    },
    'POST /account/totp/remove': {
      who: personWithTotp,
      open: async () => '/account',
      form: '/account/totp/remove',
      fill: { totp_remove_code: '000000' },
      links: ['totp_remove_code'],
      kept: { totp_remove_code: '', totp_remove_password: '' },
    },
    'POST /account/recovery-codes': {
      who: personWithTotp,
      open: async () => '/account',
      form: '/account/recovery-codes',
      fill: { recovery_password: 'not-my-password' },
      links: ['recovery_password'],
      kept: { recovery_password: '' },
    },
    'POST /account/passkeys': {
      who: person,
      open: async () => '/account',
      form: '/account/passkeys',
      fill: { passkey_name: 'Laptop' },
      evaluate: (f) => ((f.elements.namedItem('response') as HTMLInputElement).value = '{"id":"forged"}'),
      links: ['_form'],
    },
    'POST /account/passkeys/rename': {
      who: person,
      open: async (who) => {
        // A passkey as the account has it (the ceremony itself is test/browser/mfa-browser's): inserted after the sign-in.
        const id = randomUUID();
        await t.db('webauthn_credentials').insert({
          id,
          user_id: await userIdOf(who!.email),
          credential_id: randomUUID(),
          public_key: Buffer.from('not used'),
          name: 'Laptop',
        });
        return { url: '/account', id };
      },
      form: '/account/passkeys/rename',
      fill: { 'rename-{id}': '   ' },
      links: ['rename-{id}'],
    },
    'POST /account/passkeys/remove': buttons('Remove a passkey: one button per passkey (the password only past 10 minutes)'),
    'POST /verify-email': buttons('Confirm the address of an emailed link: one button'),
    'POST /set-password': {
      open: async () => {
        const u = await makeUser(t);
        const before = t.mails.length;
        await request(t.app).post('/api/auth/forgot-password').send({ email: u.email }).expect(202);
        const mail = t.mails.slice(before).find((m) => m.to === u.email)!;
        const link = new URL(/https?:\/\/\S+set-password\S+/.exec(mail.text)![0].replace(/[).,]+$/, ''));
        return link.pathname + link.search;
      },
      form: '/set-password',
      fill: { password: 'short', password_confirm: 'short' },
      links: ['password'],
      kept: { password: '', password_confirm: '' },
    },
    'POST /forgot-password': {
      open: async () => '/forgot-password',
      form: '/forgot-password',
      fill: { email: 'not-an-address' },
      links: ['email'],
      kept: { email: 'not-an-address' },
    },
    'POST /device': {
      who: person,
      open: async () => '/device',
      form: '/device',
      fill: { user_code: 'WXYZ-BCDF' },
      links: ['user_code'],
      kept: { user_code: 'WXYZ-BCDF' },
    },
    'POST /device/decide': buttons('Approve or Deny: two buttons'),
    'POST /register': {
      open: async () => '/register',
      form: '/register',
      fill: {
        first_name: 'Grace',
        last_name: 'Hopper',
        email: 'not-an-address',
        password: 'a-good-password-1',
        password_confirm: 'another-one-22',
      },
      links: ['email', 'password'],
      kept: { first_name: 'Grace', last_name: 'Hopper', email: 'not-an-address', password: '', password_confirm: '' },
    },
    'POST /login/email': {
      open: async () => '/login',
      form: '/login',
      fill: { email: '' },
      links: ['email'],
    },
    'POST /login/email/code': {
      open: async () => '/login',
      form: '/login/email/code',
      fill: { code: '000000' },
      links: ['code'],
    },
    'POST /login/email/confirm': buttons('Sign in here or not: two buttons'),

    // ——— the console ———
    'POST /admin/users/import': {
      who: adminWho,
      open: async () => '/admin/users/import',
      form: '/admin/users/import',
      fill: { 'f-content': 'this is not, a csv\nof users' },
      links: ['f-content'],
      kept: { 'f-content': 'this is not, a csv\nof users' },
    },
    'POST /admin/users': {
      who: adminWho,
      open: async () => '/admin/users/new',
      form: '/admin/users',
      fill: { 'f-email': 'not-an-address', 'f-first_name': 'Ada', 'f-last_name': 'Lovelace' },
      links: ['f-email'],
      kept: { 'f-email': 'not-an-address', 'f-first_name': 'Ada', 'f-last_name': 'Lovelace' },
    },
    'POST /admin/users/:userId/profile': {
      who: adminWho,
      open: async () => `/admin/users/${(await makeUser(t)).id}`,
      form: '{page}/profile',
      fill: { 'f-email': 'not-an-address', 'f-first_name': 'Ada' },
      links: ['f-email'],
      kept: { 'f-email': 'not-an-address', 'f-first_name': 'Ada' },
    },
    'POST /admin/users/:userId/activate': buttons('Activate: one button'),
    'POST /admin/users/:userId/deactivate': buttons('Deactivate: one button, then the confirmation'),
    'POST /admin/users/:userId/roles': {
      who: adminWho,
      open: async () => `/admin/users/${(await makeUser(t)).id}`,
      form: '{page}/roles',
      fill: {},
      evaluate: (f) => {
        const select = f.elements.namedItem('role_id') as HTMLSelectElement;
        // A role that does not exist (one deleted in another tab): refused by the API beside the field.
        select.add(new Option('gone', '00000000-0000-4000-8000-000000000000', true, true));
      },
      links: ['f-role_id'],
    },
    'POST /admin/users/:userId/roles/:roleId/remove': buttons('Remove a role: one button per role'),
    'POST /admin/users/:userId/mfa/reset': buttons('Reset the second factors: one button, then the confirmation'),
    'POST /admin/users/:userId/sessions/:sessionId/revoke': buttons('Sign out a session: one button per session'),
    'POST /admin/users/:userId/invitation': buttons('Send the invitation again: one button'),
    'POST /admin/users/:userId/password-link': buttons('Email a set-password link: one button'),
    'POST /admin/signing-keys/rotate': buttons('Rotate the signing key: one button, then the confirmation'),
    'POST /admin/applications': {
      who: adminWho,
      open: async () => '/admin/applications/new?preset=custom',
      form: '/admin/applications',
      fill: { 'f-name': 'Payroll', 'f-redirect_uris': 'not a uri' },
      links: ['f-redirect_uris'],
      kept: { 'f-name': 'Payroll', 'f-redirect_uris': 'not a uri' },
    },
    'POST /admin/applications/:clientId': {
      who: adminWho,
      open: async () => `/admin/applications/${(await makeClient(t)).clientId}`,
      form: '{page}',
      fill: { 'f-name': 'Payroll', 'f-redirect_uris': 'not a uri' },
      links: ['f-redirect_uris'],
      kept: { 'f-name': 'Payroll', 'f-redirect_uris': 'not a uri' },
    },
    'POST /admin/applications/:clientId/rotate': buttons('Rotate the secret: one button, then the confirmation'),
    'POST /admin/applications/:clientId/deactivate': buttons('Deactivate: one button, then the confirmation'),
    'POST /admin/roles': {
      who: adminWho,
      open: async () => '/admin/roles/new',
      form: '/admin/roles',
      fill: { 'f-name': 'Has spaces!', 'f-description': 'Reads the payroll' },
      links: ['f-name'],
      kept: { 'f-name': 'Has spaces!', 'f-description': 'Reads the payroll' },
    },
    'POST /admin/roles/:roleId': {
      who: adminWho,
      open: async () => `/admin/roles/${(await makeRole(t, { name: `payroll-${Date.now()}`, permissions: ['users:read'] })).id}`,
      form: '{page}',
      fill: { 'f-description': 'x'.repeat(600) },
      links: ['f-description'],
    },
    'POST /admin/roles/:roleId/deactivate': buttons('Deactivate: one button, then the confirmation'),
    'POST /admin/api-resources': {
      who: adminWho,
      open: async () => '/admin/api-resources/new',
      form: '/admin/api-resources',
      fill: { 'f-identifier': 'not a url', 'f-name': 'Payroll API' },
      links: ['f-identifier'],
      kept: { 'f-identifier': 'not a url', 'f-name': 'Payroll API' },
    },
    'POST /admin/api-resources/:resourceId': {
      who: adminWho,
      open: async () => {
        const res = await (
          await api()
        ).post('/api/admin/api-resources', { identifier: `https://api-${Date.now()}.example.test`, name: 'Payroll API' });
        return `/admin/api-resources/${res.body.resource.id}`;
      },
      form: '{page}',
      fill: { 'f-name': '', 'f-scopes': 'read' },
      links: ['f-name'],
      kept: { 'f-scopes': 'read' },
    },
    'POST /admin/api-resources/:resourceId/delete': buttons('Delete: one button, then the confirmation'),
    'POST /admin/identity-providers': {
      who: adminWho,
      open: async () => '/admin/identity-providers/new?kind=github',
      form: '/admin/identity-providers',
      fill: { 'f-slug': 'Not A Slug', 'f-name': 'GitHub', 'f-client_id': 'abc', 'f-client_secret': 'a-secret-value' },
      links: ['f-slug'],
      kept: { 'f-slug': 'Not A Slug', 'f-name': 'GitHub', 'f-client_secret': '' },
    },
    'POST /admin/identity-providers/:providerId': {
      who: adminWho,
      open: async () => {
        const slug = `gh${Date.now()}`;
        const res = await (
          await api()
        ).post('/api/admin/identity-providers', { slug, name: 'GitHub', type: 'github', client_id: 'abc', client_secret: 'secret' });
        return `/admin/identity-providers/${res.body.provider.id}`;
      },
      form: '{page}',
      fill: { 'f-slug': 'Not A Slug', 'f-client_secret': 'a-new-secret' },
      links: ['f-slug'],
      kept: { 'f-slug': 'Not A Slug', 'f-client_secret': '' },
    },
    'POST /admin/identity-providers/:providerId/delete': buttons('Delete: one button, then the confirmation'),
    'POST /admin/webhooks': {
      who: adminWho,
      open: async () => '/admin/webhooks/new',
      form: '/admin/webhooks',
      fill: { 'f-url': 'not a url', 'f-description': 'CRM sync' },
      links: ['f-url', 'f-events'],
      kept: { 'f-url': 'not a url', 'f-description': 'CRM sync' },
    },
    'POST /admin/webhooks/:webhookId': {
      who: adminWho,
      open: async () => {
        const res = await (await api()).post('/api/admin/webhooks', { url: 'https://93.184.215.14/hook', events: ['user.*'] });
        return `/admin/webhooks/${res.body.webhook.id}`;
      },
      form: '{page}',
      fill: { 'f-url': 'not a url', 'f-description': 'CRM sync' },
      links: ['f-url'],
      kept: { 'f-url': 'not a url', 'f-description': 'CRM sync' },
    },
    'POST /admin/webhooks/:webhookId/rotate': buttons('Rotate the signing secret: one button, then the confirmation'),
    'POST /admin/webhooks/:webhookId/delete': buttons('Delete: one button, then the confirmation'),
    'POST /admin/webhooks/:webhookId/deliveries/:deliveryId/redeliver': buttons('Deliver again: one button per delivery'),
    'POST /admin/scim': {
      who: adminWho,
      open: async () => '/admin/scim/new',
      form: '/admin/scim',
      fill: { 'f-name': '', 'f-description': 'Okta' },
      links: ['f-name'],
      kept: { 'f-description': 'Okta' },
    },
    'POST /admin/scim/:connectionId/rotate': buttons('Rotate the token: one button, then the confirmation'),
    'POST /admin/scim/:connectionId/delete': buttons('Delete: one button, then the confirmation'),
    'POST /admin/scim-groups/:groupId': {
      who: adminWho,
      open: async () => {
        const created = await (await api()).post('/api/admin/scim-connections', { name: `Okta ${Date.now()}` });
        const group = await request(t.app)
          .post('/scim/v2/Groups')
          .set('Authorization', `Bearer ${created.body.token}`)
          .set('Content-Type', 'application/scim+json')
          .send(JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Sales' }));
        return `/admin/scim-groups/${group.body.id}`;
      },
      form: '{page}',
      fill: {},
      evaluate: (f) => {
        const box = f.querySelector<HTMLInputElement>('input[type=checkbox]')!;
        box.value = 'not-a-role-id';
        box.checked = true;
      },
      links: ['f-role_ids'],
    },
    'POST /admin/settings': {
      who: adminWho,
      open: async () => '/admin/settings',
      form: '/admin/settings',
      fill: { 'f-brand_color': 'red', 'f-brand_name': 'Acme', 'f-smtp_url': 'smtp://user:secret@mail.example.test' },
      links: ['f-brand_color'],
      kept: { 'f-brand_color': 'red', 'f-brand_name': 'Acme', 'f-smtp_url': '' },
    },
    'POST /admin/settings/test-mail': {
      who: adminWho,
      open: async () => '/admin/settings',
      form: '/admin/settings/test-mail',
      fill: { 'f-to': 'not-an-address' },
      links: ['f-to'],
      kept: { 'f-to': 'not-an-address' },
    },
    'POST /admin/saml-apps': {
      who: adminWho,
      open: async () => '/admin/saml-apps/new',
      form: '/admin/saml-apps',
      fill: { 'f-name': 'Payroll', 'f-entity_id': 'https://sp.example.test', 'f-acs_urls': 'not a url' },
      links: ['f-acs_urls'],
      kept: { 'f-name': 'Payroll', 'f-entity_id': 'https://sp.example.test', 'f-acs_urls': 'not a url' },
    },
    'POST /admin/saml-apps/rotate-key': buttons('Rotate the signing key: one button, then the confirmation'),
    'POST /admin/saml-apps/:appId': {
      who: adminWho,
      open: async () => {
        const res = await (
          await api()
        ).post('/api/admin/saml-apps', {
          name: 'Payroll',
          entity_id: `https://sp-${Date.now()}.example.test`,
          acs_urls: [{ url: 'https://sp.example.test/acs' }],
        });
        return `/admin/saml-apps/${res.body.app.id}`;
      },
      form: '{page}',
      fill: { 'f-acs_urls': 'not a url' },
      links: ['f-acs_urls'],
      kept: { 'f-acs_urls': 'not a url' },
    },
    'POST /admin/saml-apps/:appId/delete': buttons('Delete: one button, then the confirmation'),
  };

  // Once, in the first half.
  if (shard.index === 0)
    test('the table names every HTML form post of the route table, no more, no less', () => {
      const forms = listDeclaredRoutes(t.app)
        .filter((r) => r.method === 'post' && r.decl.csrf !== undefined)
        .map((r) => `POST ${r.path}`);
      expect(forms.length).toBeGreaterThan(60);
      expect(Object.keys(CASES).sort()).toEqual([...forms].sort());
    });

  const fieldCases = Object.entries(CASES)
    .filter((e): e is [string, FieldsCase] => !('buttons' in e[1]))
    .filter((_, i) => i % shard.of === shard.index);

  async function signInContext(context: BrowserContext, who: Who | undefined): Promise<void> {
    if (!who) return;
    // The context lives for the whole suite: a connection kept alive from an earlier case may be closed by the server
    // (its keep-alive timeout) just as this request is written on it (ECONNRESET). Each sign-in uses a connection of its own.
    const headers = { connection: 'close' };
    const res = await context.request.post(`${baseUrl}/api/auth/login`, { data: { email: who.email, password: who.password }, headers });
    if (who.totpSecret && res.status() === 401) {
      const mfa_token = ((await res.json()) as { mfa_token: string }).mfa_token;
      const second = await context.request.post(`${baseUrl}/api/auth/login/mfa`, {
        data: { mfa_token, code: totpCode(t, who.totpSecret) },
        headers,
      });
      nextStep(t);
      if (second.status() !== 200) throw new Error(`second step of ${who.email}: ${second.status()}`);
      return;
    }
    if (res.status() !== 200) throw new Error(`sign-in of ${who.email}: ${res.status()}`);
  }

  /** Brings the form of a case on screen and sends the refused values. */
  async function refuse(page: Page, name: string, template: FieldsCase, who: Who | undefined): Promise<FieldsCase> {
    const opened = await template.open(who);
    const [url, id] = typeof opened === 'string' ? [opened, ''] : [opened.url, opened.id];
    const c = fill(template, (v) => v.replaceAll('{id}', id).replaceAll('{page}', url.split('?')[0]!));
    await page.goto(`${baseUrl}${url}`);
    if (name === 'POST /login/mfa' || name === 'POST /login/email/code') {
      // The second step and the email code are reached through the sign-in form.
      const user = name === 'POST /login/mfa' ? await personWithTotp() : await person();
      await page.locator('#email').fill(user.email);
      if (name === 'POST /login/mfa') {
        await page.locator('#password').fill(user.password);
        await page.locator('form[action="/login"] button[type="submit"]:not([formaction])').click();
      } else await page.locator('#email-sign-in').click();
      await page.locator(`form[action="${c.form}"], form[action^="${c.form}?"]`).first().waitFor();
    }
    if (name === 'POST /account/totp/confirm') {
      await page.locator('form[action^="/account/totp/setup"] button[type="submit"]').click();
      await page.locator('#totp_code').waitFor();
    }
    const form = page.locator(`form[action="${c.form}"], form[action^="${c.form}?"]`).first();
    for (const [id, value] of Object.entries(c.fill)) {
      const input = page.locator(`#${cssId(id)}`);
      // A closed <details> hides its form: open it as a person would.
      await input.evaluate((el) => {
        const d = el.closest('details');
        if (d) d.open = true;
      });
      await input.fill(value);
    }
    await form.evaluate((f: HTMLFormElement) => (f.noValidate = true));
    if (name === 'POST /login/email') {
      await form.locator('#email-sign-in').click();
      return c;
    }
    if (c.evaluate) await form.evaluate(c.evaluate);
    const submit = form.locator('button[type="submit"]:not([formaction])').first();
    if ((await submit.count()) && (await submit.isVisible())) await submit.click();
    else await form.evaluate((f: HTMLFormElement) => f.submit());
    return c;
  }

  /** The case with `{id}` and `{page}` filled in. */
  function fill(c: FieldsCase, sub: (v: string) => string): FieldsCase {
    const keys = (r: Record<string, string> | undefined) =>
      r ? Object.fromEntries(Object.entries(r).map(([k, v]) => [sub(k), v])) : undefined;
    return { ...c, form: sub(c.form), fill: keys(c.fill)!, kept: keys(c.kept), links: c.links.map(sub) };
  }

  const cssId = (id: string) => id.replace(/([:.])/g, '\\$1');

  test.each(fieldCases)(
    '%s: refused in English and German with summary, focus, messages beside fields, title and kept values',
    async (name, template) => {
      const messages: Record<string, string[]> = {};
      for (const l of LANGUAGES) {
        const { context, page } = tabs.get(l.locale)!;
        await context.clearCookies();
        await page.emulateMedia({ colorScheme: 'light' });
        await page.setViewportSize({ width: 1280, height: 900 });
        const who = template.who ? await template.who() : undefined;
        await signInContext(context, who);
        const c = await refuse(page, name, template, who);
        await page.locator('#error-summary').waitFor({ timeout: 15_000 });

        expect(await page.title()).toMatch(l.error);
        expect(await page.evaluate(() => document.activeElement?.id)).toBe('error-summary');
        const summary = page.locator('#error-summary');
        expect(await summary.getAttribute('role')).toBe('alert');
        expect((await summary.locator('h2').textContent())?.trim()).toBe(l.summary);
        const hrefs = await summary.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
        expect(hrefs).toEqual(c.links.filter((id) => id !== '_form').map((id) => `#${id}`));
        expect(await summary.locator('li').count()).toBe(c.links.length);

        // Each refused field: invalid, and described by its message beside it, the summary's sentence.
        const said: string[] = [];
        for (const id of c.links) {
          if (id === '_form') {
            said.push((await summary.locator('li').first().textContent())!.trim());
            continue;
          }
          const field = page.locator(`#${cssId(id)}`);
          const target = (await field.evaluate((el) => el.matches('input, select, textarea'))) ? field : field.locator('input').first();
          expect(await target.getAttribute('aria-invalid')).toBe('true');
          // A group of checkboxes is described as a whole (its fieldset).
          const describedBy = (await target.getAttribute('aria-describedby')) ?? (await field.getAttribute('aria-describedby')) ?? '';
          const beside = (
            await page.evaluate(
              (ids) => ids.map((i) => document.getElementById(i)?.textContent ?? '').join(' '),
              describedBy.split(' ').filter(Boolean),
            )
          ).trim();
          expect(beside).not.toBe('');
          const linked = (await summary.locator(`a[href="#${id}"]`).textContent())!.trim();
          expect(beside).toContain(linked.slice(0, 30));
          said.push(linked);
        }
        messages[l.locale] = said;

        for (const [id, value] of Object.entries(c.kept ?? {}))
          expect([id, await page.locator(`#${cssId(id)}`).inputValue()]).toEqual([id, value]);

        // A link of the summary moves the focus to its field.
        const first = c.links.find((id) => id !== '_form');
        if (first) {
          await summary.locator(`a[href="#${first}"]`).click();
          expect(await page.evaluate(() => document.activeElement?.id)).toBe(first);
        }

        // English light at 1280 px, German dark at 320 px: each form in each language, each scheme and each width once
        // (the refusal's markup is the same in every form; the other combinations are checked by the other browser
        // suites; CI's time budget).
        for (const [scheme, width] of l.locale.startsWith('en') ? ([['light', 1280]] as const) : ([['dark', 320]] as const)) {
          await page.emulateMedia({ colorScheme: scheme });
          await page.setViewportSize({ width, height: 900 });
          const violations = (await axeViolations(page)).map(
            (v) => `${scheme} ${width}px: ${v.id} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
          );
          expect(violations).toEqual([]);
          if (width === 320)
            expect(
              await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
            ).toBeLessThanOrEqual(1);
          if (SHOTS) {
            const file = `${name.replace(/^POST \//, '').replace(/[/:]+/g, '-')}-${l.locale.slice(0, 2)}-${width}${scheme === 'dark' ? '-dark' : ''}.png`;
            await page.screenshot({ path: path.join(SHOTS, file), fullPage: true });
          }
        }
      }
      // In the page's language: the German sentences are not the English ones.
      const en = messages['en-GB']!;
      const de = messages['de-DE']!;
      expect(de).toHaveLength(en.length);
      en.forEach((sentence, i) => expect(de[i]).not.toBe(sentence));
    },
    120_000,
  );
}
