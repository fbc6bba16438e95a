import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { makeClient, makeSignedInUser, uniqueEmail } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The administration console in German (CONTRACT §14, §15): every page, its navigation, forms, confirmations and the
 * result of an action read German with `Accept-Language: de`; a refusal of a service is said in German with the
 * API's English reason as a detail marked lang="en"; dates and numbers follow the language.
 */
const DE = 'de';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const main = (html: string) => html.slice(html.indexOf('<body'));
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

async function germanAdmin(roles = ['super_admin']) {
  const s = await makeSignedInUser(t, roles);
  const page = await s.agent.get('/admin/users/new').set('Accept-Language', DE);
  return { ...s, csrf: csrfOf(page.text) };
}

function expectGerman(res: { status: number; text: string }, status: number, german: string[], english: string[] = []) {
  expect(res.status).toBe(status);
  expect(res.text).toContain('<html lang="de">');
  for (const s of german) expect(main(res.text)).toContain(s);
  for (const s of [...english, 'Skip to content', '>Sign out<', '>Overview<']) expect(main(res.text)).not.toContain(s);
}

async function flashAfter(agent: TestAgent, res: request.Response): Promise<string> {
  expect(res.status).toBe(303);
  const page = await agent.get(res.headers.location as string).set('Accept-Language', DE);
  return main(page.text);
}

test('every console page reads German: navigation, headings, tables, filters, empty states', async () => {
  const { agent, user } = await germanAdmin();
  const client = await makeClient(t, { name: 'Lohnbuchhaltung' });
  await request(t.app).get('/api/oauth/jwks'); // the first signing key
  const pages: Array<[string, string[], string[]]> = [
    [
      '/admin',
      ['Zum Inhalt springen', 'Übersicht', 'Aktive Benutzer', 'Anmeldungen der letzten 30 Tage', 'Anmeldungen pro Tag als Tabelle'],
      ['Active users'],
    ],
    [
      '/admin/users',
      ['Benutzer einladen', 'E-Mail oder Name', 'Benutzer, neueste zuerst', 'Letzte Anmeldung'],
      ['Invite a user', 'Last sign-in'],
    ],
    ['/admin/users?q=nobody-at-all', ['Kein Benutzer passt zu diesen Filtern.'], ['No user matches']],
    ['/admin/users/new', ['Einladung senden', 'Vorname'], ['Send the invitation']],
    [
      `/admin/users/${user.id}`,
      ['Profil speichern', 'Zugewiesene Rollen', 'Aktive Sitzungen', 'Zweite Faktoren', 'Ihrer Kontoseite'],
      ['Save profile'],
    ],
    ['/admin/roles', ['Rolle erstellen', 'Rollen, global und pro Anwendung'], ['Create a role']],
    ['/admin/roles/new', ['Buchstaben, Ziffern und', 'Berechtigungen'], ['Letters, digits']],
    ['/admin/applications', ['Anwendung erstellen', 'OAuth-Anwendungen', 'Lohnbuchhaltung'], ['Create an application']],
    [
      `/admin/applications/${client.clientId}`,
      ['Weiterleitungs-URIs', 'Anwendung speichern', 'data-copied="Kopiert"'],
      ['Save application'],
    ],
    [
      '/admin/audit',
      ['Audit-Protokoll', 'Alle Typen', 'Diese Ereignisse als CSV herunterladen', 'Ereignisse, neueste zuerst'],
      ['Any type'],
    ],
    ['/admin/signing-keys', ['Signaturschlüssel', 'Veröffentlichte Signaturschlüssel'], ['Published signing keys']],
    ['/admin/settings', ['Wirksame Konfiguration', 'Einstellung'], ['Effective configuration']],
    [
      '/admin/applications/new?preset=custom',
      ['Art der Anwendung', 'Grant-Typen', 'Refresh-Tokens (angemeldet bleiben)'],
      ['Kind of application'],
    ],
    ['/admin/api-resources', ['API-Ressourcen', 'API registrieren'], ['Register an API']],
    [
      '/admin/api-resources/new',
      ['Lebensdauer des Access-Tokens (Sekunden)', 'Selbst registrierte Apps dürfen sie anfordern'],
      ['Token lifetime'],
    ],
    ['/admin/identity-providers', ['Identitätsanbieter', 'Anbieter hinzufügen', 'Noch keine Identitätsanbieter'], ['Add a provider']],
    ['/admin/identity-providers/new', ['Identitätsanbieter hinzufügen', 'Google-Konten und Google Workspace.'], ['Choose the kind']],
    [
      '/admin/identity-providers/new?kind=github',
      ['GitHub hinzufügen', 'Kurzname (Slug)', 'GitHub-API-URL'],
      ['Add GitHub', 'Lower-case letters'],
    ],
    ['/admin/webhooks', ['Webhook erstellen', 'Noch keine Webhooks'], ['Create a webhook']],
    [
      '/admin/webhooks/new',
      ['Endpunkt-URL', 'Ereignistypen, die Sie abonnieren können', 'Aktiviert (Ereignisse zustellen)'],
      ['Endpoint URL'],
    ],
  ];
  for (const [path, german, english] of pages) {
    const res = await agent.get(path).set('Accept-Language', DE);
    try {
      expectGerman(res, 200, ['Konsole', 'Abmelden', ...german], english);
    } catch (err) {
      throw new Error(`${path}: ${(err as Error).message}`, { cause: err });
    }
  }
});

test('dates, numbers and the chart follow the language', async () => {
  const { agent, user } = await germanAdmin();
  const detail = await agent.get(`/admin/users/${user.id}`).set('Accept-Language', DE);
  // "26.11.2026, 17:35 UTC" (Intl.DateTimeFormat de), never the ISO form.
  expect(main(detail.text)).toMatch(/<time datetime="[^"]+">\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2} UTC<\/time>/);
  const overview = await agent.get('/admin').set('Accept-Language', DE);
  // The chart's axis labels are days of the month in German ("26.11."), not "11-26".
  expect(overview.text).toMatch(/<text x="[\d.]+" y="[\d.]+">\d{2}\.\d{2}\.<\/text>/);
  expect(overview.text).not.toMatch(/<text x="[\d.]+" y="[\d.]+">\d{2}-\d{2}<\/text>/);
  expect(overview.text).toMatch(/\d+ Anmeldungen? und \d+ fehlgeschlagene Anmeldungen? in den letzten 30 Tagen\./);
  const english = await agent.get('/admin').set('Accept-Language', 'en');
  expect(english.text).toContain('<html lang="en">');
  expect(english.text).toMatch(/\d+ sign-ins? and \d+ failed sign-ins? in the last 30 days\./);
});

test('an action: confirmation page and result in German', async () => {
  const { agent, csrf } = await germanAdmin();
  const email = uniqueEmail('de-invite');
  const invited = await agent
    .post('/admin/users')
    .set('Accept-Language', DE)
    .type('form')
    .send({ csrf, email, first_name: 'Anna', last_name: 'Berg' });
  expect(await flashAfter(agent, invited)).toContain(`Einladung an ${email} gesendet.`);
  const row = await t.db('users').where({ email }).first();
  const confirm = await agent.post(`/admin/users/${row.id}/deactivate`).set('Accept-Language', DE).type('form').send({ csrf });
  expectGerman(confirm, 200, [`${email} deaktivieren?`, 'Abbrechen', 'Das Konto kann sich nicht mehr anmelden'], ['Cancel']);
  const done = await agent.post(`/admin/users/${row.id}/deactivate`).set('Accept-Language', DE).type('form').send({ csrf, confirm: 'yes' });
  expect(await flashAfter(agent, done)).toContain('Benutzer deaktiviert; seine Sitzungen wurden beendet.');
});

// Issue 32: every refusal of the API's rules and schemas has a catalogue key, so the German console says it in
// German, without the API's English reason as a detail.
test("a service's refusal and a field error: the German sentence of its catalogue key, no English detail", async () => {
  const { agent, csrf, user } = await germanAdmin();
  const own = await agent.post(`/admin/users/${user.id}/deactivate`).set('Accept-Language', DE).type('form').send({ csrf, confirm: 'yes' });
  const page = await flashAfter(agent, own);
  expect(page).toContain('role="alert">Sie können Ihr eigenes Konto nicht deaktivieren.');
  expect(page).not.toContain('lang="en">');

  const bad = await agent
    .post('/admin/users')
    .set('Accept-Language', DE)
    .type('form')
    .send({ csrf, email: 'not-an-email', first_name: 'A', last_name: 'B' });
  expect(bad.status).toBe(400);
  expect(main(bad.text)).toContain('class="field-error" id="f-email-error">Geben Sie eine E-Mail-Adresse ein.</p>');
  expect(main(bad.text)).not.toContain('lang="en">');

  // In English the API's message is the whole sentence, as before.
  const english = await agent
    .post('/admin/users')
    .set('Accept-Language', 'en')
    .type('form')
    .send({ csrf, email: 'not-an-email', first_name: 'A', last_name: 'B' });
  expect(main(english.text)).not.toContain('lang="en">');
});

test('someone without an admin role gets a German 403 page', async () => {
  const plain = await makeSignedInUser(t);
  const res = await plain.agent.get('/admin').set('Accept-Language', DE);
  expect(res.status).toBe(403);
  expect(res.text).toContain('<html lang="de">');
  expect(res.text).toContain('Die Verwaltungskonsole ist für Administratoren.');
  const admin = await germanAdmin(['admin']);
  const missing = await admin.agent.get('/admin/users/00000000-0000-4000-8000-000000000000').set('Accept-Language', DE);
  expectGerman(missing, 404, ['Nicht gefunden', 'Zurück zur Übersicht'], ['Not found']);
});
