import request from 'supertest';
import { makeClient, makeSignedInUser } from '../helpers/factories';
import { enrolTotp, signInWithTotp } from '../helpers/mfa';
import { authorizeParams } from '../helpers/oauth';
import { authnRequestXml, createSamlApp, makeTestSp, redirectQuery } from '../helpers/saml';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 30 (noticed last session): with MFA_REQUIRED_FOR_ADMINS, /login and /consent send an administrator whose
 * session has no second factor to enrol, but /authorize (with a grant, no page at all) and /saml/continue answered
 * the app straight away. Both now send such an administrator to enrol first and back, like /login.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { MFA_REQUIRED_FOR_ADMINS: 'true' } });
});
afterAll(async () => {
  await t.close();
});

const local = (url: string) => {
  const u = new URL(url, t.config.baseUrl);
  return u.pathname + u.search + u.hash;
};

test('/authorize: an admin without a second factor is sent to enrol (before any grant or consent); prompt=none gets interaction_required', async () => {
  const admin = await makeSignedInUser(t, ['admin']);
  const client = await makeClient(t, { redirectUris: ['https://wiki.test/callback'] });
  const { params } = authorizeParams(client);
  const authorizeUrl = `${t.config.baseUrl}/api/oauth/authorize?${new URLSearchParams(params)}`;
  const res = await request(t.app).get(local(authorizeUrl)).set('Cookie', `accessToken=${admin.accessToken}`);
  expect(res.status).toBe(302);
  expect(local(res.headers.location)).toBe(
    `/account?${new URLSearchParams({ enrol: 'required', return_to: authorizeUrl })}#second-factors`,
  );

  const silent = await request(t.app)
    .get(`/api/oauth/authorize?${new URLSearchParams({ ...params, prompt: 'none' })}`)
    .set('Cookie', `accessToken=${admin.accessToken}`);
  const back = new URL(silent.headers.location);
  expect(back.origin + back.pathname).toBe('https://wiki.test/callback');
  expect(back.searchParams.get('error')).toBe('interaction_required');
  expect(back.searchParams.get('code')).toBeNull();

  // Anyone else goes on as before.
  const person = await makeSignedInUser(t);
  const plain = await request(t.app).get(local(authorizeUrl)).set('Cookie', `accessToken=${person.accessToken}`);
  expect(new URL(plain.headers.location).pathname).toBe('/consent');
});

test('/saml/continue: an admin without a second factor is sent to enrol and back; no Response goes to the SP', async () => {
  // The app is created by an administrator who did enrol (the admin API requires it).
  const creator = await makeSignedInUser(t, ['admin']);
  const { secret } = await enrolTotp(t, creator.agent);
  const withTotp = await signInWithTotp(t, creator.user, secret);
  const sp = makeTestSp();
  await createSamlApp(t, `Bearer ${withTotp.accessToken}`, sp);
  const admin = await makeSignedInUser(t, ['admin']);
  const first = await request(t.app).get(`/saml/sso?${redirectQuery(authnRequestXml(t, sp).xml)}`);
  expect(first.status).toBe(303);
  const continueUrl = new URL(first.headers.location, t.config.baseUrl);
  const res = await request(t.app)
    .get(continueUrl.pathname + continueUrl.search)
    .set('Cookie', `accessToken=${admin.accessToken}`);
  expect(res.status).toBe(303);
  expect(local(res.headers.location)).toBe(
    `/account?${new URLSearchParams({ enrol: 'required', return_to: continueUrl.href })}#second-factors`,
  );
  expect(res.text).not.toContain('SAMLResponse');

  const person = await makeSignedInUser(t);
  const plain = await request(t.app)
    .get(continueUrl.pathname + continueUrl.search)
    .set('Cookie', `accessToken=${person.accessToken}`);
  expect(plain.status).toBe(200);
  expect(plain.text).toContain('SAMLResponse');
});
