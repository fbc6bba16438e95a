import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { createProvider, updateProvider } from '../../src/services/federation/providers.service';
import { makeSignedInUser, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { runCli } from '../helpers/processes';
import { makeRole, makeUserWithPermissions } from '../helpers/rbac';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/test-app';
import { startAndAuthorize, startUpstreamOidc, throughUpstream, type UpstreamOidc } from '../helpers/upstream';

/**
 * The fourth review's federation findings (CONTRACT §23), each against a real OpenID provider (node-oidc-provider on
 * 127.0.0.1): a take-back ends linked identities; a trusted sign-in never merges into a never-verified (squatted)
 * account; an account with admin rights is never linked automatically; every link is mailed; the audit row of an
 * automatic link names no victim as its actor; identities are keyed by issuer; an email claim must be one address.
 */
let t: TestApp;
let upstream: UpstreamOidc;
let other: UpstreamOidc;
const SLUGS = ['corp', 'trusted', 'moving'];

async function addOidc(app: TestApp, slug: string, name: string, options: { trustEmail?: boolean; at?: UpstreamOidc } = {}) {
  const at = options.at ?? upstream;
  return createProvider(app.ctx, {
    slug,
    name,
    type: 'oidc',
    issuer: at.issuer,
    clientId: at.clientId,
    clientSecret: at.clientSecret,
    trustEmail: options.trustEmail ?? false,
  });
}

beforeAll(async () => {
  t = await createTestApp({ env: { IDP_ALLOW_PRIVATE: 'true' } });
  const callbacks = SLUGS.map((s) => `${t.config.baseUrl}/api/auth/idp/${s}/callback`);
  upstream = await startUpstreamOidc(callbacks);
  other = await startUpstreamOidc(callbacks);
  // The provider defaults (CONTRACT §16): trust_email false, allow_signup true.
  await addOidc(t, 'corp', 'Corp SSO');
  await addOidc(t, 'trusted', 'Trusted SSO', { trustEmail: true });
  await addOidc(t, 'moving', 'Moving SSO');
});
afterAll(async () => {
  await upstream?.stop();
  await other?.stop();
  await t?.close();
});

let n = 0;
/** An upstream account asserting `email` (verified there unless told otherwise), chosen for the next sign-in. */
function asUpstream(email: string, claims: { email_verified?: boolean; sub?: string } = {}, at: UpstreamOidc = upstream) {
  const sub = claims.sub ?? `upstream-${++n}`;
  at.accounts.set(sub, { sub, email, email_verified: claims.email_verified ?? true, given_name: 'Mallory', family_name: 'Upstream' });
  at.signInAs(sub);
  return sub;
}

/** A whole upstream sign-in in a fresh browser: the callback's answer and the browser. */
async function upstreamSignIn(app: TestApp, slug: string): Promise<{ res: request.Response; browser: TestAgent }> {
  const browser = request.agent(app.app);
  const { callbackPath } = await startAndAuthorize(browser, slug);
  return { res: await browser.get(callbackPath), browser };
}

async function auditRows(app: TestApp, type: string, subjectId: string) {
  await app.ctx.events.idle?.();
  return app.db('audit_events').where({ type, subject_id: subjectId }).orderBy('id');
}

function lastLinkTo(app: TestApp, email: string, path: string): string {
  const mail = [...app.mails].reverse().find((m) => m.to === email && m.text.includes(`${path}?token=`));
  return /token=([A-Za-z0-9_-]{43})/.exec(mail!.text)![1]!;
}

const identitiesOf = (app: TestApp, userId: string) => app.db('user_identities').where({ user_id: userId });

/** The attacker signs up upstream asserting the victim's (never verified) address with a default provider. */
async function attackerSignsUp(app: TestApp, victimEmail: string) {
  const sub = asUpstream(victimEmail);
  const { res, browser } = await upstreamSignIn(app, 'corp');
  expect(res.status).toBe(303);
  const me = await browser.get('/api/auth/me');
  expect(me.status).toBe(200);
  expect(me.body.user).toMatchObject({ email: victimEmail, email_verified: false });
  const userId: string = me.body.user.id;
  expect(await identitiesOf(app, userId)).toHaveLength(1);
  return { sub, browser, userId };
}

describe('High: an upstream identity survives the owner’s take-back', () => {
  test('set-password through the mailed link removes the identity, mails and audits it; the attacker no longer signs in', async () => {
    const victim = uniqueEmail('victim');
    const attacker = await attackerSignsUp(t, victim);

    // The owner opens the verification link mailed to the address and chooses a password.
    const mailsBefore = t.mails.length;
    const res = await request(t.app)
      .post('/api/auth/set-password')
      .send({ token: lastLinkTo(t, victim, '/verify-email'), password: 'owner-pass-123' });
    expect(res.status).toBe(200);

    expect(await identitiesOf(t, attacker.userId)).toHaveLength(0);
    const notice = t.mails.slice(mailsBefore).find((m) => m.to === victim);
    expect(notice?.subject).toBe('Linked sign-ins were removed from your account');
    expect(notice?.text).toContain('(Corp SSO) was removed too');
    const [unlinked] = await auditRows(t, 'auth.identity.unlinked', attacker.userId);
    expect(unlinked.detail).toMatchObject({ provider: 'corp', via: 'set_password_link' });

    // The attacker's session is over, and signing in upstream again no longer reaches the account.
    expect((await attacker.browser.get('/api/auth/me')).status).toBe(401);
    t.mails.length = 0;
    upstream.signInAs(attacker.sub);
    const again = await upstreamSignIn(t, 'corp');
    expect(again.res.status).toBe(303);
    expect(again.res.headers.location).toMatch(/^\/login\?/);
    expect((await again.browser.get('/api/auth/me')).status).toBe(401);
    expect(await identitiesOf(t, attacker.userId)).toHaveLength(0);
    // The owner's password works.
    expect((await request(t.app).post('/api/auth/login').send({ email: victim, password: 'owner-pass-123' })).status).toBe(200);
  });

  test('an administrator’s factor reset (DELETE /api/users/:userId/mfa) removes linked identities too', async () => {
    const victim = uniqueEmail('reset');
    const attacker = await attackerSignsUp(t, victim);
    const admin = await makeSignedInUser(t, ['admin']);
    const mailsBefore = t.mails.length;
    expect((await request(t.app).delete(`/api/users/${attacker.userId}/mfa`).set('Authorization', admin.bearer)).status).toBe(204);
    expect(await identitiesOf(t, attacker.userId)).toHaveLength(0);
    const notice = t.mails.slice(mailsBefore).find((m) => m.to === victim);
    expect(notice?.text).toContain('An administrator reset the second factors of your account.');
    expect(notice?.text).toContain('(Corp SSO)');
    const [unlinked] = await auditRows(t, 'auth.identity.unlinked', attacker.userId);
    expect(unlinked.actor_id).toBe(admin.user.id);
    expect(unlinked.detail).toMatchObject({ provider: 'corp', via: 'admin' });
    upstream.signInAs(attacker.sub);
    const again = await upstreamSignIn(t, 'corp');
    expect((await again.browser.get('/api/auth/me')).status).toBe(401);
  });

  test('create-admin with MFA_REQUIRED_FOR_ADMINS: the identity goes; the attacker cannot sign in as super_admin and plant a TOTP', async () => {
    const strict = await createTestApp({ env: { IDP_ALLOW_PRIVATE: 'true', MFA_REQUIRED_FOR_ADMINS: 'true' } });
    try {
      await addOidc(strict, 'corp', 'Corp SSO');
      const victim = uniqueEmail('operator');
      const attacker = await attackerSignsUp(strict, victim);
      const cli = await runCli('admin', ['create-admin', '--email', victim, '--password', 'operator-pass-1'], {
        ...process.env,
        ...TEST_ENV,
        DATABASE_URL: strict.databaseUrl,
      });
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      expect(cli.stdout).toContain('Removed 1 linked sign-in (Corp SSO); the address was notified by mail.');
      expect(await identitiesOf(strict, attacker.userId)).toHaveLength(0);
      const [unlinked] = await auditRows(strict, 'auth.identity.unlinked', attacker.userId);
      expect(unlinked.detail).toMatchObject({ provider: 'corp', via: 'create_admin' });

      // Before the fix the attacker signed straight back in as super_admin and enrolled an authenticator app.
      upstream.signInAs(attacker.sub);
      const again = await upstreamSignIn(strict, 'corp');
      expect(again.res.status).toBe(303);
      expect(again.res.headers.location).toMatch(/^\/login\?/);
      expect((await again.browser.get('/api/auth/me')).status).toBe(401);
      expect((await again.browser.post('/api/auth/mfa/totp/setup')).status).toBe(401);
      expect(await strict.db('mfa_totp').where({ user_id: attacker.userId })).toHaveLength(0);
    } finally {
      await strict.close();
    }
  }, 90_000);
});

describe('High: a trusted upstream sign-in never merges the owner into a squatted account', () => {
  test('no automatic link to a never-verified account; after the owner takes it back, the squatter is out and the link is made', async () => {
    const owner = uniqueEmail('owner');
    const squatter = request.agent(t.app);
    const reg = await squatter
      .post('/api/auth/register')
      .send({ first_name: 'Squat', last_name: 'Ter', email: owner, password: 'squatter-pass-1' });
    expect(reg.status).toBe(201);
    const accountId: string = reg.body.user.id;

    // The owner signs in through a provider that is trusted and says the address is verified.
    const sub = asUpstream(owner, { email_verified: true });
    const first = await upstreamSignIn(t, 'trusted');
    expect(first.res.status).toBe(303);
    expect(first.res.headers.location).toMatch(/^\/login\?/);
    expect((await first.browser.get('/api/auth/me')).status).toBe(401);
    expect(await identitiesOf(t, accountId)).toHaveLength(0);

    // The owner takes the address back with a mailed link: the squatter's password and session end.
    await request(t.app).post('/api/auth/forgot-password').send({ email: owner }).expect(202);
    const set = await request(t.app)
      .post('/api/auth/set-password')
      .send({ token: lastLinkTo(t, owner, '/set-password'), password: 'owner-pass-456' });
    expect(set.status).toBe(200);
    expect((await squatter.get('/api/auth/me')).status).toBe(401);
    expect((await request(t.app).post('/api/auth/login').send({ email: owner, password: 'squatter-pass-1' })).status).toBe(401);

    // Now the account's address is verified: the trusted sign-in links and signs in, and the link is mailed.
    const mailsBefore = t.mails.length;
    upstream.signInAs(sub);
    const second = await upstreamSignIn(t, 'trusted');
    expect(second.res.status).toBe(303);
    expect((await second.browser.get('/api/auth/me')).body.user.id).toBe(accountId);
    const mail = t.mails.slice(mailsBefore).find((m) => m.to === owner);
    expect(mail?.subject).toBe('Trusted SSO was linked to your account');
  });
});

describe('High: system:manage_users no longer makes a super_admin', () => {
  test('no automatic link to a super_admin, nor to an account holding an admin permission through a custom role', async () => {
    const boss = await makeUser(t, { roles: ['super_admin'] });
    const helpdesk = await makeUserWithPermissions(t, ['users:read']);
    // A deactivated role still counts: reactivating it would hand its rights to whoever was linked meanwhile.
    const dormant = await makeUser(t);
    const role = await makeRole(t, { permissions: ['users:write'], isActive: false });
    await t.db('user_roles').insert({ user_id: dormant.id, role_id: role.id });
    for (const account of [boss, helpdesk.user, dormant]) {
      asUpstream(account.email, { email_verified: true });
      const { res, browser } = await upstreamSignIn(t, 'trusted');
      expect(res.status).toBe(303);
      expect(res.headers.location).toMatch(/^\/login\?/);
      expect((await browser.get('/api/auth/me')).status).toBe(401);
      expect(await identitiesOf(t, account.id)).toHaveLength(0);
    }
  });

  test('an automatic link is mailed to the account and its audit row names no signed-in actor, but the upstream identity', async () => {
    const user = await makeUser(t);
    const mailsBefore = t.mails.length;
    const sub = asUpstream(user.email, { email_verified: true });
    const { res, browser } = await upstreamSignIn(t, 'trusted');
    expect(res.status).toBe(303);
    expect((await browser.get('/api/auth/me')).body.user.id).toBe(user.id);
    const mail = t.mails.slice(mailsBefore).find((m) => m.to === user.email);
    expect(mail?.subject).toBe('Trusted SSO was linked to your account');
    expect(mail?.text).toContain('A sign-in with Trusted SSO was linked to your account');
    const [linked] = await auditRows(t, 'auth.identity.linked', user.id);
    expect(linked.actor_id).toBeNull();
    expect(linked.detail).toMatchObject({ provider: 'trusted', via: 'verified_email', upstream_subject: sub });
    const [login] = await auditRows(t, 'auth.login.succeeded', user.id);
    expect(login.detail).toMatchObject({ provider: 'trusted', upstream_subject: sub });
  });

  test('role admin (system:manage_users) cannot see or configure identity providers in the console; the new permission can', async () => {
    const admin = await makeUser(t, { roles: ['admin'] });
    const { agent } = await signIn(t, admin);
    const overview = await agent.get('/admin');
    expect(overview.status).toBe(200);
    expect(overview.text).not.toContain('href="/admin/identity-providers"');
    expect((await agent.get('/admin/identity-providers')).status).toBe(403);
    expect((await agent.get('/admin/identity-providers/new?kind=github')).status).toBe(403);

    const boss = await makeUser(t, { roles: ['super_admin'] });
    const superAgent = (await signIn(t, boss)).agent;
    expect((await superAgent.get('/admin')).text).toContain('href="/admin/identity-providers"');
    expect((await superAgent.get('/admin/identity-providers')).status).toBe(200);
  });
});

describe('the mails in German (Accept-Language)', () => {
  const DE = 'de-DE,de;q=0.9,en;q=0.5';

  test('a new link and a take-back that removed linked sign-ins are said in German', async () => {
    const user = await makeUser(t);
    asUpstream(user.email, { email_verified: true });
    const browser = request.agent(t.app);
    const { callbackPath } = await startAndAuthorize(browser, 'trusted');
    expect((await browser.get(callbackPath).set('Accept-Language', DE)).status).toBe(303);
    const linked = [...t.mails].reverse().find((m) => m.to === user.email);
    expect(linked?.subject).toBe('Trusted SSO wurde mit Ihrem Konto verknüpft');
    expect(linked?.text).toContain('Eine Anmeldung mit Trusted SSO wurde mit Ihrem Konto verknüpft');

    const admin = await makeSignedInUser(t, ['admin']);
    const res = await request(t.app).delete(`/api/users/${user.id}/mfa`).set('Authorization', admin.bearer).set('Accept-Language', DE);
    expect(res.status).toBe(204);
    const reset = [...t.mails].reverse().find((m) => m.to === user.email);
    expect(reset?.subject).toBe('Verknüpfte Anmeldungen wurden von Ihrem Konto entfernt');
    expect(reset?.text).toContain('Ein Administrator hat die zweiten Faktoren Ihres Kontos zurückgesetzt.');
    expect(reset?.text).toContain('(Trusted SSO) wurde entfernt');
    expect(reset?.text).not.toMatch(/linked|removed/);
  });
});

describe('Medium: an identity is keyed by (provider, issuer, subject)', () => {
  test('after the provider’s issuer changes, the same sub at the new issuer does not sign in as the old user', async () => {
    const sub = 'shared-subject';
    const firstEmail = uniqueEmail('first-issuer');
    asUpstream(firstEmail, { sub }, upstream);
    const before = await upstreamSignIn(t, 'moving');
    expect(before.res.status).toBe(303);
    const oldUserId: string = (await before.browser.get('/api/auth/me')).body.user.id;
    const [stored] = await identitiesOf(t, oldUserId);
    expect(stored.issuer).toBe(upstream.issuer);

    const provider = await t.db('identity_providers').where({ slug: 'moving' }).first();
    await updateProvider(t.ctx, provider.id, { issuer: other.issuer, clientId: other.clientId, clientSecret: other.clientSecret });
    const secondEmail = uniqueEmail('second-issuer');
    asUpstream(secondEmail, { sub }, other);
    const after = await upstreamSignIn(t, 'moving');
    expect(after.res.status).toBe(303);
    const me = (await after.browser.get('/api/auth/me')).body.user;
    expect(me.id).not.toBe(oldUserId);
    expect(me.email).toBe(secondEmail);
    expect(await identitiesOf(t, oldUserId)).toHaveLength(1);
  });
});

describe('Low: an upstream email claim must be one valid address', () => {
  test.each([
    ['an address list', 'a@example.test, victim@example.test'],
    ['a quoted display name', '"Victim" <victim@example.test>'],
    ['a header injection', 'mallory@example.test\r\nBcc: victim@example.test'],
    ['surrounding space', ' mallory@example.test'],
  ])('%s: a clear 403 page, nobody signed in, nothing stored', async (_name, claim) => {
    asUpstream(claim);
    const { res, browser } = await upstreamSignIn(t, 'corp');
    expect(res.status).toBe(403);
    expect(res.text).toContain('is not a single valid address');
    expect((await browser.get('/api/auth/me')).status).toBe(401);
    expect(await t.db('users').where('email', 'like', '%mallory%').orWhere('email', 'like', '%,%')).toHaveLength(0);
  });
});

describe('High: a take-back stops a link already begun from /account', () => {
  /** Signs in with a password, posts the /account link form for `slug`, and goes through the upstream sign-in. */
  async function beginAccountLink(slug: string, options: { emailVerified?: boolean } = {}) {
    const user = await makeUser(t, options);
    const browser = request.agent(t.app);
    await browser.post('/api/auth/login').send({ email: user.email, password: user.password }).expect(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec((await browser.get('/account')).text)![1]!;
    const start = await browser.post('/account/identities/link').type('form').send({ csrf, slug });
    expect(start.status).toBe(303);
    asUpstream(uniqueEmail('attacker-upstream'));
    const back = await throughUpstream(start.headers.location);
    return { user, browser, callbackPath: back.pathname + back.search };
  }

  test('the owner takes the account back (set-password link) while the link is open: the callback links nothing', async () => {
    // A registrant of a never-verified address begins a link; the mailbox owner takes the address back meanwhile.
    const { user, browser, callbackPath } = await beginAccountLink('corp', { emailVerified: false });
    await request(t.app).post('/api/auth/forgot-password').send({ email: user.email }).expect(202);
    const set = await request(t.app)
      .post('/api/auth/set-password')
      .send({ token: lastLinkTo(t, user.email, '/set-password'), password: 'owner-pass-789' });
    expect(set.status).toBe(200);
    expect(await t.db('idp_flows').where({ link_user_id: user.id }).whereNull('used_at')).toHaveLength(0);

    const res = await browser.get(callbackPath);
    expect(res.status).toBe(400);
    expect(res.text).toContain('This sign-in has expired');
    expect(await identitiesOf(t, user.id)).toHaveLength(0);
    expect(await auditRows(t, 'auth.identity.linked', user.id)).toHaveLength(0);
  });

  test('the session that began the link was signed out meanwhile: the callback links nothing', async () => {
    const { user, browser, callbackPath } = await beginAccountLink('corp');
    // "Sign out every other session" from another device ends the starting session but is no take-back.
    const login = await request(t.app).post('/api/auth/login').send({ email: user.email, password: user.password }).expect(200);
    const out = await request(t.app).post('/api/auth/sessions/revoke-others').set('Authorization', `Bearer ${login.body.accessToken}`);
    expect(out.status).toBe(200);
    expect((await browser.get('/api/auth/me')).status).toBe(401);
    const res = await browser.get(callbackPath);
    expect(res.status).toBe(400);
    expect(await identitiesOf(t, user.id)).toHaveLength(0);
  });

  test('a take-back also spends the account’s pending links (waiting for the account to be proved)', async () => {
    const user = await makeUser(t, { emailVerified: false });
    asUpstream(user.email, { email_verified: true });
    const { res } = await upstreamSignIn(t, 'corp');
    expect(res.status).toBe(303);
    expect(await t.db('idp_pending_links').where({ user_id: user.id }).whereNull('used_at')).toHaveLength(1);
    await request(t.app).post('/api/auth/forgot-password').send({ email: user.email }).expect(202);
    await request(t.app)
      .post('/api/auth/set-password')
      .send({ token: lastLinkTo(t, user.email, '/set-password'), password: 'owner-pass-790' })
      .expect(200);
    expect(await t.db('idp_pending_links').where({ user_id: user.id })).toHaveLength(0);
  });
});

describe('Medium: an admin through a SCIM group mapping counts as privileged', () => {
  /** An account that holds `roleName` only through membership of a SCIM group mapped to it (CONTRACT §20). */
  async function adminThroughScimGroup(roleName: string) {
    const user = await makeUser(t);
    const role = await t.db('roles').where({ name: roleName }).whereNull('application').first();
    const connection = { id: randomUUID(), name: `scim-${randomUUID()}`, token_hash: randomUUID(), created_at: new Date() };
    await t.db('scim_connections').insert(connection);
    const group = {
      id: randomUUID(),
      connection_id: connection.id,
      display_name: 'Admins',
      created_at: new Date(),
      updated_at: new Date(),
    };
    await t.db('scim_groups').insert(group);
    await t.db('scim_group_roles').insert({ group_id: group.id, role_id: role.id });
    await t.db('scim_group_members').insert({ group_id: group.id, user_id: user.id });
    expect(await t.db('user_roles').where({ user_id: user.id })).toHaveLength(0);
    return user;
  }

  test('no automatic link to an account that is admin only through a SCIM group', async () => {
    const admin = await adminThroughScimGroup('admin');
    // The live permission lookup sees the role: the account can list users.
    const { bearer } = await signIn(t, admin).then((s) => ({ bearer: `Bearer ${s.accessToken}` }));
    expect((await request(t.app).get('/api/users').set('Authorization', bearer)).status).toBe(200);

    asUpstream(admin.email, { email_verified: true });
    const { res, browser } = await upstreamSignIn(t, 'trusted');
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^\/login\?/);
    expect((await browser.get('/api/auth/me')).status).toBe(401);
    expect(await identitiesOf(t, admin.id)).toHaveLength(0);
  });

  test('an admin cannot reset the factors of a peer who is admin through a SCIM group', async () => {
    const peer = await adminThroughScimGroup('admin');
    const admin = await makeSignedInUser(t, ['admin']);
    const res = await request(t.app).delete(`/api/users/${peer.id}/mfa`).set('Authorization', admin.bearer);
    expect(res.status).toBe(403);
  });
});
