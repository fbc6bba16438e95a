import request from 'supertest';
import { sha256Hex } from '../../src/lib/crypto';
import { makeSignedInUser, makeUser, uniqueEmail } from '../helpers/factories';
import { enrolTotp, totpCode } from '../helpers/mfa';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { addProvider, startAndAuthorize, startUpstreamOidc, throughUpstream, type UpstreamOidc } from '../helpers/upstream';

/**
 * CONTRACT §16 against a real OpenID provider (node-oidc-provider on 127.0.0.1): the round trip, each linking rule,
 * the second factor, and every forged or replayed callback signing nobody in.
 */
let t: TestApp;
let upstream: UpstreamOidc;
let adminToken: string;
const SLUGS = ['corp', 'trusted', 'closed'];

beforeAll(async () => {
  t = await createTestApp({ env: { IDP_ALLOW_PRIVATE: 'true' } });
  upstream = await startUpstreamOidc(SLUGS.map((s) => `${t.config.baseUrl}/api/auth/idp/${s}/callback`));
  adminToken = (await makeSignedInUser(t, ['super_admin'])).accessToken;
  const common = { type: 'oidc', issuer: upstream.issuer, client_id: upstream.clientId, client_secret: upstream.clientSecret };
  await addProvider(t, adminToken, { ...common, slug: 'corp', name: 'Corp SSO' });
  await addProvider(t, adminToken, { ...common, slug: 'trusted', name: 'Trusted SSO', trust_email: true });
  await addProvider(t, adminToken, { ...common, slug: 'closed', name: 'Closed SSO', allow_signup: false, trust_email: true });
});
afterAll(async () => {
  await upstream?.stop();
  await t?.close();
});

let n = 0;
function upstreamAccount(claims: { email?: string; email_verified?: boolean; given_name?: string; family_name?: string } = {}) {
  const sub = `upstream-${++n}`;
  upstream.accounts.set(sub, {
    sub,
    email: uniqueEmail('fed'),
    email_verified: true,
    given_name: 'Grace',
    family_name: 'Hopper',
    ...claims,
  });
  upstream.signInAs(sub);
  return upstream.accounts.get(sub)!;
}

async function audit(type: string, subjectId?: string) {
  await t.ctx.events.idle?.();
  const q = t.db('audit_events').where({ type });
  if (subjectId) q.where({ subject_id: subjectId });
  return q.select('*');
}

describe('GET /api/auth/idp/:slug/start', () => {
  test('302 to the provider with PKCE S256, state, nonce and our callback; a browser-binding cookie', async () => {
    const res = await request(t.app).get('/api/auth/idp/corp/start');
    expect(res.status).toBe(302);
    const url = new URL(res.headers.location);
    expect(url.origin).toBe(upstream.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(url.searchParams.get('redirect_uri')).toBe(`${t.config.baseUrl}/api/auth/idp/corp/callback`);
    expect(url.searchParams.get('scope')).toBe('openid profile email');
    const cookie = (res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('idp_browser='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/api\/auth\/idp/);
  });

  test('an unknown or disabled provider: 404 page', async () => {
    const res = await request(t.app).get('/api/auth/idp/nope/start');
    expect(res.status).toBe(404);
    expect(res.text).toContain('does not exist');
  });
});

describe('callback: a new person', () => {
  test('sign-up with allow_signup: account created (unverified email: not trusted), amr fed, user.created and linked audited', async () => {
    const account = upstreamAccount();
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'corp', { return_to: `${t.config.baseUrl}/account` });
    const res = await browser.get(callbackPath);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${t.config.baseUrl}/account`);
    const me = await browser.get('/api/auth/me');
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ email: account.email, name: 'Grace Hopper', email_verified: false, amr: ['fed'] });
    const user = await t.db('users').where({ email: account.email }).first();
    expect(user.password_hash).toBeNull();
    expect(await audit('user.created', user.id)).toHaveLength(1);
    const [linked] = await audit('auth.identity.linked', user.id);
    expect(linked.detail).toMatchObject({ provider: 'corp', via: 'sign_up' });
    const [login] = await audit('auth.login.succeeded', user.id);
    expect(login.detail).toMatchObject({ provider: 'corp', amr: ['fed'] });
    // Not trusted: the address gets a verification mail.
    expect(t.mails.some((m) => m.to === account.email)).toBe(true);

    // The same identity again signs the same user in, no second account.
    upstream.signInAs(account.sub);
    const again = request.agent(t.app);
    const second = await startAndAuthorize(again, 'corp');
    expect((await again.get(second.callbackPath)).status).toBe(303);
    expect((await again.get('/api/auth/me')).body.user.id).toBe(user.id);
    expect(await t.db('users').where({ email: account.email }).count({ c: '*' })).toEqual([{ c: '1' }]);
  });

  test('with trust_email and email_verified true the new account is verified', async () => {
    const account = upstreamAccount();
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'trusted');
    expect((await browser.get(callbackPath)).status).toBe(303);
    expect((await browser.get('/api/auth/me')).body.user).toMatchObject({ email: account.email, email_verified: true });
  });

  test('without allow_signup: refused, nobody signed in, no account', async () => {
    const account = upstreamAccount();
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'closed');
    const res = await browser.get(callbackPath);
    expect(res.status).toBe(403);
    expect(res.text).toContain('cannot be created this way');
    expect(res.headers['set-cookie']?.toString() ?? '').not.toContain('accessToken=');
    expect(await t.db('users').where({ email: account.email }).first()).toBeUndefined();
  });
});

describe('callback: an existing account with the asserted email', () => {
  test('trust_email + email_verified true: linked automatically and signed in', async () => {
    const user = await makeUser(t);
    upstreamAccount({ email: user.email.toUpperCase(), email_verified: true });
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'trusted');
    expect((await browser.get(callbackPath)).status).toBe(303);
    expect((await browser.get('/api/auth/me')).body.user.id).toBe(user.id);
    const [linked] = await audit('auth.identity.linked', user.id);
    expect(linked.detail).toMatchObject({ provider: 'trusted', via: 'verified_email' });
  });

  test('trust_email but email_verified false: no link; the person must prove the account, then the link is made', async () => {
    const user = await makeUser(t);
    upstreamAccount({ email: user.email, email_verified: false });
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'trusted');
    const res = await browser.get(callbackPath);
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^\/login\?/);
    expect(res.headers['set-cookie']?.toString()).not.toContain('accessToken=');
    expect(await t.db('user_identities').where({ user_id: user.id })).toHaveLength(0);

    const login = await browser.get(res.headers.location);
    expect(login.text).toContain('Trusted SSO');
    expect(login.text).toContain(user.email);
    const csrf = /name="csrf" value="([^"]+)"/.exec(login.text)![1];
    const signedIn = await browser.post('/login').type('form').send({ email: user.email, password: user.password, csrf });
    expect(signedIn.status).toBe(303);
    // Issue 30: signing in alone links nothing; the confirmation page names the provider and the upstream account.
    expect(signedIn.headers.location).toBe('/login/link');
    expect(await t.db('user_identities').where({ user_id: user.id })).toHaveLength(0);
    const confirm = await browser.get('/login/link');
    expect(confirm.text).toContain(`Link Trusted SSO account ${user.email} to your account?`);
    const confirmCsrf = /name="csrf" value="([^"]+)"/.exec(confirm.text)![1];
    const linkedNow = await browser.post('/login/link').type('form').send({ csrf: confirmCsrf, decision: 'link' });
    expect(linkedNow.status).toBe(303);
    expect(linkedNow.headers.location).toBe('/account?done=identity_linked#identities');
    const identities = await browser.get('/api/auth/identities');
    expect(identities.body.identities).toEqual([expect.objectContaining({ provider: { slug: 'trusted', name: 'Trusted SSO' } })]);
    const [linked] = await audit('auth.identity.linked', user.id);
    expect(linked.detail).toMatchObject({ via: 'sign_in_proof' });
    expect(t.mails.find((m) => m.to === user.email)?.subject).toBe('Trusted SSO was linked to your account');
  });

  test('not trusted: proving another account does not link the identity to it', async () => {
    const owner = await makeUser(t);
    const other = await makeUser(t);
    upstreamAccount({ email: owner.email, email_verified: true });
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'corp');
    const res = await browser.get(callbackPath);
    const login = await browser.get(res.headers.location);
    const csrf = /name="csrf" value="([^"]+)"/.exec(login.text)![1];
    expect((await browser.post('/login').type('form').send({ email: other.email, password: other.password, csrf })).status).toBe(303);
    expect(await t.db('user_identities').whereIn('user_id', [owner.id, other.id])).toHaveLength(0);
  });

  test('an account with a second factor is still asked for it; amr ["fed","otp"]', async () => {
    const user = await makeUser(t);
    const agent = request.agent(t.app);
    await agent.post('/api/auth/login').send({ email: user.email, password: user.password });
    const { secret } = await enrolTotp(t, agent);
    upstreamAccount({ email: user.email, email_verified: true });
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'trusted');
    const step = await browser.get(callbackPath);
    expect(step.status).toBe(200);
    expect(step.text).toContain('Confirm it is you');
    expect(step.headers['set-cookie']?.toString() ?? '').not.toContain('accessToken=');
    expect((await browser.get('/api/auth/me')).status).toBe(401);
    const csrf = /name="csrf" value="([^"]+)"/.exec(step.text)![1];
    const mfaToken = /name="mfa_token" value="([^"]+)"/.exec(step.text)![1];
    const done = await browser
      .post('/login/mfa')
      .type('form')
      .send({ csrf, mfa_token: mfaToken, code: totpCode(t, secret) });
    expect(done.status).toBe(303);
    expect((await browser.get('/api/auth/me')).body.user).toMatchObject({ id: user.id, amr: ['fed', 'otp'] });
  });

  test('a deactivated account is refused', async () => {
    const user = await makeUser(t, { isActive: false });
    upstreamAccount({ email: user.email, email_verified: true });
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'trusted');
    const res = await browser.get(callbackPath);
    expect(res.status).toBe(403);
    expect(res.text).toContain('deactivated');
  });
});

describe('forged callbacks sign nobody in', () => {
  async function freshCallback(slug = 'corp') {
    upstreamAccount();
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, slug);
    return { browser, callbackPath };
  }

  test('a replayed callback: the second use is refused', async () => {
    const { browser, callbackPath } = await freshCallback();
    expect((await browser.get(callbackPath)).status).toBe(303);
    const replay = await browser.get(callbackPath);
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('already used');
    expect(replay.headers['set-cookie']?.toString() ?? '').not.toContain('accessToken=');
  });

  test('a callback in another browser (no or another binding cookie) is refused, and the flow is not burnt by it', async () => {
    const { browser, callbackPath } = await freshCallback();
    const attacker = request.agent(t.app);
    await attacker.get('/api/auth/idp/corp/start');
    expect((await attacker.get(callbackPath)).status).toBe(400);
    expect((await request(t.app).get(callbackPath)).status).toBe(400);
    expect((await attacker.get('/api/auth/me')).status).toBe(401);
    expect((await browser.get(callbackPath)).status).toBe(303);
  });

  test('a wrong state is refused', async () => {
    const { browser, callbackPath } = await freshCallback();
    const forged = new URL(callbackPath, 'http://x');
    forged.searchParams.set('state', 'forged-state');
    const res = await browser.get(forged.pathname + forged.search);
    expect(res.status).toBe(400);
    expect((await browser.get('/api/auth/me')).status).toBe(401);
  });

  test('an expired round trip (over 10 minutes) is refused', async () => {
    const { browser, callbackPath } = await freshCallback();
    t.clock.advance(601);
    expect((await browser.get(callbackPath)).status).toBe(400);
  });

  test('an id_token whose nonce is not the one sent is refused', async () => {
    upstreamAccount();
    const browser = request.agent(t.app);
    const start = await browser.get('/api/auth/idp/corp/start');
    const state = new URL(start.headers.location).searchParams.get('state')!;
    // The provider will sign the nonce of the authorization request; the flow now expects another.
    await t
      .db('idp_flows')
      .where({ state_hash: sha256Hex(state) })
      .update({ nonce: 'another-nonce' });
    const back = await throughUpstream(start.headers.location);
    const res = await browser.get(back.pathname + back.search);
    expect(res.status).toBe(400);
    expect(res.text).toContain('could not be verified');
    expect((await browser.get('/api/auth/me')).status).toBe(401);
    const [failure] = (await audit('auth.login.failed')).filter((e) => e.detail.reason === 'idp_answer_rejected');
    expect(failure).toBeDefined();
  });

  test('an authorization response naming another issuer (RFC 9207 iss) is refused', async () => {
    const { browser, callbackPath } = await freshCallback();
    const forged = new URL(callbackPath, 'http://x');
    expect(forged.searchParams.get('iss')).toBe(upstream.issuer);
    forged.searchParams.set('iss', 'https://evil.example');
    const res = await browser.get(forged.pathname + forged.search);
    expect(res.status).toBe(400);
    expect((await browser.get('/api/auth/me')).status).toBe(401);
  });

  test('an error from the provider is refused and burns the flow', async () => {
    const { browser, callbackPath } = await freshCallback();
    const url = new URL(callbackPath, 'http://x');
    const state = url.searchParams.get('state')!;
    const denied = await browser.get(`${url.pathname}?${new URLSearchParams({ error: 'access_denied', state })}`);
    expect(denied.status).toBe(400);
    expect((await browser.get(callbackPath)).status).toBe(400);
  });

  test('nothing of the round trip is logged: no code, state or token in the log', async () => {
    // The relying party logs only the failed check's name; the test app's log is silent, so read what is stored.
    const rows = await t.db('audit_events').where('type', 'like', 'auth.%').select('detail');
    const text = JSON.stringify(rows);
    expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+\./);
  });
});

describe('GET /api/auth/identities, DELETE /api/auth/identities/:id', () => {
  test('an account with a password may unlink; an account whose only way is the identity may not (409)', async () => {
    const account = upstreamAccount();
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'corp');
    await browser.get(callbackPath);
    const list = await browser.get('/api/auth/identities');
    expect(list.status).toBe(200);
    expect(list.body.identities).toEqual([
      {
        id: expect.any(String),
        provider: { slug: 'corp', name: 'Corp SSO' },
        email: account.email,
        created_at: expect.any(String),
        last_used_at: expect.any(String),
        needs_confirmation: false,
      },
    ]);
    const refused = await browser.delete(`/api/auth/identities/${list.body.identities[0].id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('conflict');
    expect((await browser.get('/api/auth/identities')).body.identities).toHaveLength(1);

    // With a password it may go.
    const user = await t.db('users').where({ email: account.email }).first();
    await t
      .db('users')
      .where({ id: user.id })
      .update({ password_hash: await t.ctx.passwords.hash('a-password') });
    expect((await browser.delete(`/api/auth/identities/${list.body.identities[0].id}`)).status).toBe(204);
    expect((await browser.get('/api/auth/identities')).body.identities).toEqual([]);
    const [unlinked] = await audit('auth.identity.unlinked', user.id);
    expect(unlinked.detail).toMatchObject({ provider: 'corp' });
  });

  test('an unlink commits with its audit row or not at all (CONTRACT §11)', async () => {
    const account = upstreamAccount();
    const browser = request.agent(t.app);
    await browser.get((await startAndAuthorize(browser, 'corp')).callbackPath);
    const user = await t.db('users').where({ email: account.email }).first();
    // The sign-up wrote the account, its identity and both rows in one transaction.
    expect(await audit('user.created', user.id)).toHaveLength(1);
    expect(await audit('auth.identity.linked', user.id)).toHaveLength(1);
    await t
      .db('users')
      .where({ id: user.id })
      .update({ password_hash: await t.ctx.passwords.hash('a-password') });
    const [identity] = (await browser.get('/api/auth/identities')).body.identities;
    await t.db.raw(`create function refuse_unlink_row() returns trigger language plpgsql as $$
      begin
        if new.type = 'auth.identity.unlinked' and new.subject_id::text = '${user.id}' then raise exception 'audit write refused'; end if;
        return new;
      end $$`);
    await t.db.raw('create trigger refuse_unlink_row before insert on audit_events for each row execute function refuse_unlink_row()');
    try {
      expect((await browser.delete(`/api/auth/identities/${identity.id}`)).status).toBeGreaterThanOrEqual(500);
    } finally {
      await t.db.raw('drop trigger refuse_unlink_row on audit_events');
      await t.db.raw('drop function refuse_unlink_row()');
    }
    // The identity is still linked: the change did not happen without its row.
    expect((await browser.get('/api/auth/identities')).body.identities).toHaveLength(1);
    expect(await audit('auth.identity.unlinked', user.id)).toHaveLength(0);
    expect((await browser.delete(`/api/auth/identities/${identity.id}`)).status).toBe(204);
    expect(await audit('auth.identity.unlinked', user.id)).toHaveLength(1);
  });

  test("another user's identity: 404", async () => {
    upstreamAccount();
    const browser = request.agent(t.app);
    await browser.get((await startAndAuthorize(browser, 'corp')).callbackPath);
    const [identity] = (await browser.get('/api/auth/identities')).body.identities;
    const other = await makeSignedInUser(t);
    expect((await request(t.app).delete(`/api/auth/identities/${identity.id}`).set('Authorization', other.bearer)).status).toBe(404);
  });
});

describe('linking from /account (POST /account/identities/link, CSRF-protected)', () => {
  async function linkForm(browser: ReturnType<typeof request.agent>, fields: Record<string, string> = {}) {
    const page = await browser.get('/account');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
    return browser
      .post('/account/identities/link')
      .type('form')
      .send({ csrf, slug: 'corp', ...fields });
  }

  test('a recent sign-in links the identity to the signed-in account, whatever its email', async () => {
    const user = await makeUser(t);
    const browser = request.agent(t.app);
    await browser.post('/api/auth/login').send({ email: user.email, password: user.password });
    const page = await browser.get('/account');
    expect(page.text).toContain('Link Corp SSO');
    upstreamAccount({ email: uniqueEmail('elsewhere') });
    const start = await linkForm(browser);
    expect(start.status).toBe(303);
    expect(new URL(start.headers.location).origin).toBe(upstream.issuer);
    const back = await throughUpstream(start.headers.location);
    const res = await browser.get(back.pathname + back.search);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/account?done=identity_linked#identities');
    expect((await browser.get('/api/auth/identities')).body.identities).toEqual([
      expect.objectContaining({ provider: { slug: 'corp', name: 'Corp SSO' } }),
    ]);
    const [linked] = await audit('auth.identity.linked', user.id);
    expect(linked.detail).toMatchObject({ via: 'account' });
    expect(linked.actor_id).toBe(user.id);
    // CONTRACT §23: every new link is mailed to the account's address.
    expect(t.mails.find((m) => m.to === user.email)?.subject).toBe('Corp SSO was linked to your account');
    const after = await browser.get('/account');
    expect(after.text).toContain('Unlink Corp SSO');
    expect(after.text).not.toContain('Link Corp SSO');
  });

  test('without the CSRF field the post is refused and nothing starts', async () => {
    const user = await makeUser(t);
    const browser = request.agent(t.app);
    await browser.post('/api/auth/login').send({ email: user.email, password: user.password });
    const res = await browser.post('/account/identities/link').type('form').send({ slug: 'corp' });
    expect(res.status).toBe(403);
    expect(await t.db('idp_flows').where({ link_user_id: user.id })).toHaveLength(0);
  });

  test('a sign-in older than 10 minutes is sent to sign in again first', async () => {
    const user = await makeUser(t);
    const browser = request.agent(t.app);
    await browser.post('/api/auth/login').send({ email: user.email, password: user.password });
    t.clock.advance(11 * 60);
    const res = await linkForm(browser);
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^\/login\?return_to=/);
    expect(await t.db('idp_flows').where({ link_user_id: user.id })).toHaveLength(0);
  });

  test('the public start endpoint never links: a signed-in browser starting a sign-in gets a plain sign-in flow', async () => {
    const user = await makeUser(t);
    const browser = request.agent(t.app);
    await browser.post('/api/auth/login').send({ email: user.email, password: user.password });
    expect((await browser.get('/api/auth/idp/corp/start?link=1')).status).toBe(302);
    expect(await t.db('idp_flows').where({ link_user_id: user.id })).toHaveLength(0);
  });
});
