import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { ensureSetupLink } from '../../src/services/setup.service';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { enrolTotp, totpCode } from '../helpers/mfa';
import { authorizeParams, authorizePath } from '../helpers/oauth';
import { makeAppClient } from '../helpers/apps';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp';
import { createTestApp, type TestApp } from '../helpers/test-app';
import { makeIdentityProvider } from '../helpers/upstream';

/**
 * CONTRACT §15 "every hosted page and email is translated": the pages and mails translated after the first catalogues
 * (setup, logout, consent scopes, device, federation, page errors, the factor mails) read German with
 * `Accept-Language: de`, say so in <html lang>, and keep no English sentence; `ui_locales` wins on an OAuth flow.
 */
const HTML = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';
const DE = 'de-DE,de;q=0.9,en;q=0.5';

let smtp: TestSmtpServer;
let t: TestApp;
beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ mailer: 'smtp', env: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

/** The visible part of a page (the CSS in <head> has English words such as "button"). */
const main = (html: string) => html.slice(html.indexOf('<main'));

function expectGerman(res: { status: number; text: string }, status: number, german: string[], english: string[]) {
  expect(res.status).toBe(status);
  expect(res.text).toContain('<html lang="de">');
  for (const s of german) expect(main(res.text)).toContain(s);
  for (const s of english) expect(main(res.text)).not.toContain(s);
}

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

describe('/setup in German', () => {
  test('form, a refused post, the done and the invalid pages', async () => {
    const fresh = await createTestApp();
    try {
      const token = new URL((await ensureSetupLink(fresh.ctx))!).searchParams.get('token')!;
      const agent = request.agent(fresh.app);
      const form = await agent.get(`/setup?token=${token}`).set('Accept-Language', DE);
      expectGerman(
        form,
        200,
        ['Ersten Administrator anlegen', 'Administrator anlegen', 'Vorname'],
        ['Create the first administrator', 'First name'],
      );
      const bad = await agent
        .post('/setup')
        .set('Accept-Language', DE)
        .type('form')
        .send({
          token,
          csrf: csrfOf(form.text),
          email: 'a@example.test',
          first_name: 'A',
          last_name: 'B',
          password: 'x',
          password_confirm: 'x',
        });
      expectGerman(bad, 400, ['Wählen Sie ein Passwort mit mindestens'], ['password must be', 'at least']);
      const mismatch = await agent
        .post('/setup')
        .set('Accept-Language', DE)
        .type('form')
        .send({
          token,
          csrf: csrfOf(bad.text),
          email: 'a@example.test',
          first_name: 'A',
          last_name: 'B',
          password: 'long-enough-1',
          password_confirm: 'other-one-22',
        });
      expectGerman(mismatch, 400, ['Die beiden Passwörter stimmen nicht überein.'], ['not the same']);
      const invalid = await request(fresh.app).get('/setup?token=wrong').set('Accept-Language', DE);
      expectGerman(invalid, 404, ['Dieser Einrichtungslink ist nicht gültig', 'npm run admin'], ['This setup link']);
      const done = await request(fresh.app).get('/setup?done=1').set('Accept-Language', DE);
      expectGerman(done, 200, ['Administrator angelegt', 'Weiter zur Anmeldung'], ['Administrator created']);
    } finally {
      await fresh.close();
    }
  });
});

describe('OAuth pages in German', () => {
  test('ui_locales=de wins over Accept-Language on /login and on /consent, whose scope descriptions are German', async () => {
    const client = await makeClient(t, { name: 'Rezeptbox', scopes: ['openid', 'profile', 'email', 'read'] });
    const { agent } = await signIn(t, await makeUser(t));
    const { params } = authorizeParams(client, { scope: 'openid email read', ui_locales: 'de' });
    const authorize = await agent.get(authorizePath(params)).set('Accept-Language', 'en');
    const consentUrl = new URL(authorize.headers.location);
    expect(consentUrl.pathname).toBe('/consent');
    expect(consentUrl.searchParams.get('ui_locales')).toBe('de');
    const consent = await agent.get(`${consentUrl.pathname}${consentUrl.search}`).set('Accept-Language', 'en');
    expectGerman(
      consent,
      200,
      ['Ihre Identität bestätigen', 'Ihre E-Mail-Adresse sehen', 'Ihre Daten lesen', 'Erlauben', 'Ablehnen'],
      ['Confirm your identity', 'See your email address', 'Read your data', 'Approve'],
    );

    expect(consent.text).toContain('name="ui_locales" value="de"');
    const undecided = await agent
      .post('/consent')
      .set('Accept-Language', 'en')
      .type('form')
      .send({ csrf: csrfOf(consent.text), request_id: consentUrl.searchParams.get('request_id')!, ui_locales: 'de', decision: '' });
    expectGerman(undecided, 400, ['Erlauben oder Ablehnen'], ['Choose Approve or Deny']);

    const anonymous = await request(t.app).get(authorizePath(params)).set('Accept-Language', 'en');
    const loginUrl = new URL(anonymous.headers.location);
    const login = await request(t.app).get(`${loginUrl.pathname}${loginUrl.search}`).set('Accept-Language', 'en');
    expectGerman(login, 200, ['Anmelden', 'um mit Rezeptbox fortzufahren'], ['Forgot your password?']);
  });

  test('a bad authorize link is a German page with the technical detail marked as English', async () => {
    const res = await request(t.app)
      .get(`/api/oauth/authorize?${new URLSearchParams({ client_id: 'nope', response_type: 'code' })}`)
      .set('Accept', HTML)
      .set('Accept-Language', DE);
    expectGerman(res, 400, ['Dieser Anmeldelink ist nicht gültig', 'Technisches Detail:', '<code lang="en">'], ['This sign-in link']);
  });

  test('the logout confirmation page and an invalid logout link', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t, { name: 'Wiki', postLogoutRedirectUris: ['https://app.test/out'] });
    const { agent } = await signIn(t, user);
    const path = `/api/oauth/logout?${new URLSearchParams({ client_id: client.clientId, post_logout_redirect_uri: 'https://app.test/out' })}`;
    const page = await agent.get(path).set('Accept-Language', DE);
    expectGerman(
      page,
      200,
      ['Abmelden?', 'Wiki bittet Sie, Ihre Single-Sign-on-Sitzung in diesem Browser zu beenden.', 'Angemeldet als', 'Angemeldet bleiben'],
      ['Sign out?', 'Stay signed in', 'asks'],
    );
    const invalid = await agent
      .get(`/api/oauth/logout?${new URLSearchParams({ post_logout_redirect_uri: 'https://app.test/out' })}`)
      .set('Accept-Language', DE);
    expectGerman(invalid, 400, ['Dieser Abmeldelink ist nicht gültig', 'nichts geändert'], ['This sign-out link']);
  });
});

describe('/device in German', () => {
  test('entry, a wrong code, the confirmation with German scopes, and the result', async () => {
    const client = await makeAppClient(t, {
      type: 'public',
      grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'],
      redirectUris: [],
      name: 'Fernseher',
    });
    const started = await request(t.app)
      .post('/api/oauth/device_authorization')
      .type('form')
      .send({ client_id: client.clientId, scope: 'openid profile' });
    expect(started.status).toBe(200);
    const { agent } = await signIn(t, await makeUser(t));
    const entry = await agent.get('/device').set('Accept-Language', DE);
    expectGerman(
      entry,
      200,
      ['Gerät verbinden', 'Geben Sie den Code ein, den Ihr Gerät anzeigt', 'Weiter'],
      ['Connect a device', 'Continue'],
    );
    const wrong = await agent
      .post('/device')
      .set('Accept-Language', DE)
      .type('form')
      .send({ user_code: 'BBBB-BBBB', csrf: csrfOf(entry.text) });
    expectGerman(wrong, 400, ['Dieser Code ist nicht gültig.'], ['That code is not valid']);
    const confirm = await agent
      .post('/device')
      .set('Accept-Language', DE)
      .type('form')
      .send({ user_code: started.body.user_code, csrf: csrfOf(wrong.text) });
    expectGerman(
      confirm,
      200,
      ['möchte auf Ihr Konto zugreifen', 'Ihren Namen sehen', 'Ihre Identität bestätigen', 'Erlauben'],
      ['wants to access', 'See your name', 'Approve'],
    );
    const done = await agent
      .post('/device/decide')
      .set('Accept-Language', DE)
      .type('form')
      .send({ user_code: started.body.user_code, decision: 'deny', csrf: csrfOf(confirm.text) });
    expectGerman(done, 200, ['Anfrage abgelehnt', 'Fernseher hat keinen Zugriff erhalten.'], ['Request denied']);
  });
});

describe('federation strings in German', () => {
  test('/login offers "Weiter mit GitHub"; /account lists linked sign-ins; unlinking is announced; refusals are German pages', async () => {
    const providerId = await makeIdentityProvider(t);
    const login = await request(t.app).get('/login').set('Accept-Language', DE);
    expectGerman(login, 200, ['Weiter mit GitHub', 'aria-label="Andere Anmeldemöglichkeiten"'], ['Continue with', 'Other ways to sign in']);

    const user = await makeUser(t);
    const identityId = randomUUID();
    await t.db('user_identities').insert({
      id: identityId,
      user_id: user.id,
      provider_id: providerId,
      issuer: 'https://github.com',
      subject: `gh-${identityId}`,
      email: user.email,
    });
    const { agent } = await signIn(t, user);
    const account = await agent.get('/account').set('Accept-Language', DE);
    expectGerman(account, 200, ['Verknüpfte Anmeldungen', 'aria-label="GitHub trennen"', '>Trennen<'], ['Linked sign-ins', '>Unlink<']);
    const unlinked = await agent
      .post('/account/identities/remove')
      .set('Accept-Language', DE)
      .type('form')
      .send({ csrf: csrfOf(account.text), identity_id: identityId });
    expect(unlinked.status).toBe(303);
    const after = await agent.get(unlinked.headers.location).set('Accept-Language', DE);
    expectGerman(
      after,
      200,
      ['Die Verknüpfung der Anmeldung wurde aufgehoben.', 'Mit Ihrem Konto ist keine andere Anmeldung verknüpft.'],
      ['No other sign-in'],
    );

    const unknown = await request(t.app).get('/api/auth/idp/no-such-provider/start').set('Accept', HTML).set('Accept-Language', DE);
    expectGerman(unknown, 404, ['Unbekannte Anmeldemöglichkeit'], ['Unknown sign-in option']);
    const stale = await request(t.app)
      .get(`/api/auth/idp/${(await t.db('identity_providers').where({ id: providerId }).first()).slug}/callback?state=x&code=y`)
      .set('Accept', HTML)
      .set('Accept-Language', DE);
    expectGerman(stale, 400, ['Anmeldung fehlgeschlagen', 'Beginnen Sie erneut auf der Anmeldeseite.'], ['Sign-in failed', 'Start again']);
  });
});

describe('error pages and service errors on pages in German', () => {
  test('the 404 page', async () => {
    const res = await request(t.app).get('/no/such/page').set('Accept', HTML).set('Accept-Language', DE);
    expectGerman(res, 404, ['Seite nicht gefunden'], ['Page not found']);
  });

  test('/account: a wrong current password, a name too long, and the passkey script texts are German', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    const page = await agent.get('/account').set('Accept-Language', DE);
    expectGerman(page, 200, ['data-cancelled="Die Passkey-Anfrage wurde abgebrochen', 'z. B. Laptop'], ['e.g. Laptop', 'was cancelled']);
    const wrong = await agent
      .post('/account/password')
      .set('Accept-Language', DE)
      .type('form')
      .send({
        csrf: csrfOf(page.text),
        current_password: 'not-the-password',
        new_password: 'brand-new-pass-1',
        new_password_confirm: 'brand-new-pass-1',
      });
    expectGerman(wrong, 403, ['Das aktuelle Passwort ist nicht korrekt.'], ['Invalid', 'incorrect', 'password is']);
    const long = await agent
      .post('/account/profile')
      .set('Accept-Language', DE)
      .type('form')
      .send({ csrf: csrfOf(wrong.text), first_name: 'x'.repeat(101), last_name: 'B' });
    expectGerman(long, 400, ['Geben Sie einen Namen mit 1 bis 100 Zeichen in einer Zeile ein.'], ['too long', 'First name']);
    const again = await agent
      .post('/account/recovery-codes')
      .set('Accept-Language', DE)
      .type('form')
      .send({ csrf: csrfOf(long.text), password: user.password, code: '' });
    expectGerman(
      again,
      409,
      ['Richten Sie eine Authenticator-App oder einen Passkey ein, bevor Sie Wiederherstellungscodes erstellen.'],
      ['Set up an'],
    );
  });
});

describe('mails in German (through SMTP)', () => {
  const lastMailTo = async (email: string) => {
    await t.ctx.mailer.idle();
    const mails = smtp.mailsTo(email);
    return mails[mails.length - 1]!;
  };

  async function withTotp(agent: TestAgent) {
    const setup = await agent.post('/api/auth/mfa/totp/setup').set('Accept-Language', DE);
    const confirm = await agent
      .post('/api/auth/mfa/totp/confirm')
      .set('Accept-Language', DE)
      .send({ code: totpCode(t, setup.body.secret) });
    expect(confirm.status).toBe(200);
  }

  test('a factor added: subject and text German, the factor named in German', async () => {
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    await withTotp(agent);
    const mail = await lastMailTo(user.email);
    expect(mail.subject).toBe('Ihrem Konto wurde eine Anmeldemethode hinzugefügt');
    expect(mail.text).toContain('Eine Authenticator-App wurde Ihrem Konto als Anmeldemethode hinzugefügt.');
    expect(mail.text).not.toContain('An authenticator app');
  });

  test("an administrator's factor reset: German subject, cause and list of what went (Intl.ListFormat)", async () => {
    const admin = await makeSignedInUser(t, ['admin']);
    const user = await makeUser(t);
    const { agent } = await signIn(t, user);
    await enrolTotp(t, agent);
    const res = await request(t.app).delete(`/api/users/${user.id}/mfa`).set('Authorization', admin.bearer).set('Accept-Language', DE);
    expect(res.status).toBe(204);
    const mail = await lastMailTo(user.email);
    expect(mail.subject).toBe('Die zweiten Faktoren Ihres Kontos wurden entfernt');
    expect(mail.text).toContain('Ein Administrator hat die zweiten Faktoren Ihres Kontos zurückgesetzt.');
    expect(mail.text).toContain('(die Authenticator-App und die Wiederherstellungscodes)');
    expect(mail.text).not.toMatch(/second factors|authenticator app/);
  });
});
