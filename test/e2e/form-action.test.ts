import request from 'supertest';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { enrolTotp } from '../helpers/mfa';
import { authorizeParams } from '../helpers/oauth';
import { authnRequestXml, createSamlApp, makeTestSp, redirectQuery } from '../helpers/saml';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { addProvider } from '../helpers/upstream';

/**
 * Issue 30: the pages' CSP carries `form-action`. It is `'self'` on every answer and widened, per answer, only by the
 * validated places the page's forms end at after the server's redirects (Chromium checks form-action on those
 * redirects; test/browser/form-action-browser.test.ts runs the flows in Chromium). TEST_ENV's BASE_URL is
 * http://sso.test and LOGIN_APPS names https://portal.test.
 */
let t: TestApp;
let cookie: string;
let admin: Awaited<ReturnType<typeof makeSignedInUser>>;
beforeAll(async () => {
  t = await createTestApp({ env: { IDP_ALLOW_PRIVATE: 'true' } });
  admin = await makeSignedInUser(t, ['super_admin']);
  cookie = `accessToken=${(await makeSignedInUser(t)).accessToken}`;
});
afterAll(async () => {
  await t.close();
});

/** The form-action directive of an answer's CSP, exactly. */
function formAction(res: request.Response): string | undefined {
  const csp = res.headers['content-security-policy'] as string | undefined;
  return csp
    ?.split(';')
    .map((d) => d.trim())
    .find((d) => d.startsWith('form-action'));
}

const authorizeUrl = (params: Record<string, string>) => `${t.config.baseUrl}/api/oauth/authorize?${new URLSearchParams(params)}`;
const loginFor = (returnTo: string) => `/login?${new URLSearchParams({ return_to: returnTo })}`;

test("every answer says form-action 'self' by default: pages, the console, JSON", async () => {
  expect(formAction(await request(t.app).get('/login'))).toBe("form-action 'self'");
  expect(formAction(await request(t.app).get('/forgot-password'))).toBe("form-action 'self'");
  expect(formAction(await request(t.app).get('/account').set('Cookie', cookie))).toBe("form-action 'self'");
  expect(formAction(await request(t.app).get('/admin/users').set('Cookie', `accessToken=${admin.accessToken}`))).toBe("form-action 'self'");
  expect(formAction(await request(t.app).get('/api/health'))).toBe("form-action 'self'");
});

describe('the sign-in pages: the redirect URI of the authorization they return to, once /authorize would accept it', () => {
  test('GET /login for an authorization, and the page again after a wrong password', async () => {
    const client = await makeClient(t, { redirectUris: ['https://wiki.test/callback'] });
    const returnTo = authorizeUrl(authorizeParams(client).params);
    expect(formAction(await request(t.app).get(loginFor(returnTo)))).toBe("form-action 'self' https://wiki.test");

    const agent = request.agent(t.app);
    const page = await agent.get(loginFor(returnTo));
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const wrong = await agent.post('/login').type('form').send({ csrf, return_to: returnTo, email: 'nobody@example.com', password: 'x' });
    expect(wrong.status).toBe(401);
    expect(formAction(wrong)).toBe("form-action 'self' https://wiki.test");
  });

  test('a pushed authorization (PAR): the redirect URI among the pushed parameters, while the request_uri is usable', async () => {
    const client = await makeClient(t, { redirectUris: ['https://pushed.test/callback'] });
    const pushed = await request(t.app)
      .post('/api/oauth/par')
      .type('form')
      .send({ ...authorizeParams(client).params, client_secret: client.clientSecret });
    expect(pushed.status).toBe(201);
    const requestUri = pushed.body.request_uri as string;
    const returnTo = authorizeUrl({ client_id: client.clientId, request_uri: requestUri });
    expect(formAction(await request(t.app).get(loginFor(returnTo)))).toBe("form-action 'self' https://pushed.test");
    // Another client's id, or a request_uri this server never issued, widens nothing.
    const other = await makeClient(t, { redirectUris: ['https://other.test/callback'] });
    expect(formAction(await request(t.app).get(loginFor(authorizeUrl({ client_id: other.clientId, request_uri: requestUri }))))).toBe(
      "form-action 'self'",
    );
    const forged = authorizeUrl({ client_id: client.clientId, request_uri: 'urn:ietf:params:oauth:request_uri:forged' });
    expect(formAction(await request(t.app).get(loginFor(forged)))).toBe("form-action 'self'");
  });

  test('the second step (a TOTP account) says the same', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    await enrolTotp(t, agent);
    const client = await makeClient(t, { redirectUris: ['https://wiki.test/callback'] });
    const returnTo = authorizeUrl(authorizeParams(client).params);
    const browser = request.agent(t.app);
    const page = await browser.get(loginFor(returnTo));
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const step = await browser.post('/login').type('form').send({ csrf, return_to: returnTo, email: user.email, password: user.password });
    expect(step.text).toContain('name="mfa_token"');
    expect(formAction(step)).toBe("form-action 'self' https://wiki.test");
  });

  test("a native app's private-use scheme is allowed by its scheme", async () => {
    const client = await makeClient(t, { redirectUris: ['com.example.wiki:/callback'] });
    const returnTo = authorizeUrl(authorizeParams(client, { redirect_uri: 'com.example.wiki:/callback' }).params);
    expect(formAction(await request(t.app).get(loginFor(returnTo)))).toBe("form-action 'self' com.example.wiki:");
  });

  test('an unregistered redirect URI, an unknown client or a return_to that is not allowed widens nothing', async () => {
    const client = await makeClient(t, { redirectUris: ['https://wiki.test/callback'] });
    const unregistered = authorizeUrl(authorizeParams(client, { redirect_uri: 'https://evil.test/callback' }).params);
    expect(formAction(await request(t.app).get(loginFor(unregistered)))).toBe("form-action 'self'");
    const unknown = authorizeUrl({ ...authorizeParams(client).params, client_id: 'no-such-client' });
    expect(formAction(await request(t.app).get(loginFor(unknown)))).toBe("form-action 'self'");
    expect(formAction(await request(t.app).get(loginFor('https://evil.test/')))).toBe("form-action 'self'");
  });

  test('an allow-listed LOGIN_APPS destination is its own origin', async () => {
    expect(formAction(await request(t.app).get(loginFor('https://portal.test/home')))).toBe("form-action 'self' https://portal.test");
  });

  test('the sign-up page ends on this server (its post lands on /register?done=1)', async () => {
    const open = await createTestApp({ env: { REGISTRATION: 'open' } });
    try {
      const client = await makeClient(open, { redirectUris: ['https://wiki.test/callback'] });
      const res = await request(open.app).get(
        `/register?${new URLSearchParams({ return_to: authorizeUrl(authorizeParams(client).params) })}`,
      );
      expect(res.status).toBe(200);
      expect(formAction(res)).toBe("form-action 'self'");
    } finally {
      await open.close();
    }
  });
});

test("consent: approve and deny end at the request's redirect URI", async () => {
  const client = await makeClient(t, { redirectUris: ['https://wiki.test/callback'] });
  const start = await request(t.app)
    .get(`/api/oauth/authorize?${new URLSearchParams(authorizeParams(client).params)}`)
    .set('Cookie', cookie);
  expect(start.status).toBe(302);
  const consent = new URL(start.headers.location as string);
  expect(consent.pathname).toBe('/consent');
  const res = await request(t.app)
    .get(consent.pathname + consent.search)
    .set('Cookie', cookie);
  expect(res.status).toBe(200);
  expect(formAction(res)).toBe("form-action 'self' https://wiki.test");
});

test('logout confirmation: the registered post_logout_redirect_uri only', async () => {
  const client = await makeClient(t, { postLogoutRedirectUris: ['https://wiki.test/bye'] });
  const confirm = await request(t.app)
    .get(`/api/oauth/logout?${new URLSearchParams({ client_id: client.clientId, post_logout_redirect_uri: 'https://wiki.test/bye' })}`)
    .set('Cookie', cookie);
  expect(confirm.text).toContain('Sign out?');
  expect(formAction(confirm)).toBe("form-action 'self' https://wiki.test");
  const plain = await request(t.app).get(`/api/oauth/logout?client_id=${client.clientId}`).set('Cookie', cookie);
  expect(plain.text).toContain('Sign out?');
  expect(formAction(plain)).toBe("form-action 'self'");
});

test("SAML: the auto-POST page allows the SP's ACS URL", async () => {
  const sp = makeTestSp();
  await createSamlApp(t, admin.bearer, sp);
  const first = await request(t.app).get(`/saml/sso?${redirectQuery(authnRequestXml(t, sp).xml)}`);
  expect(first.status).toBe(303);
  const next = new URL(first.headers.location as string, t.config.baseUrl);
  const page = await request(t.app)
    .get(next.pathname + next.search)
    .set('Cookie', cookie);
  expect(page.text).toContain(`action="${sp.acsUrl}"`);
  expect(formAction(page)).toBe(`form-action 'self' ${new URL(sp.acsUrl).origin}`);
});

test("/account: each linkable provider's authorization endpoint (GitHub's base URL here)", async () => {
  const { id } = await addProvider(t, admin.accessToken, {
    slug: 'ghe',
    name: 'GitHub Enterprise',
    type: 'github',
    base_url: 'https://github.corp.test',
    api_base_url: 'https://api.github.corp.test',
    client_id: 'abc',
    client_secret: 'secret-value',
  });
  try {
    expect(formAction(await request(t.app).get('/account').set('Cookie', cookie))).toBe("form-action 'self' https://github.corp.test");
  } finally {
    await request(t.app).delete(`/api/admin/identity-providers/${id}`).set('Authorization', admin.bearer);
  }
});
