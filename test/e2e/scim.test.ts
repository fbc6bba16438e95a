import request from 'supertest';
import { sha256Hex } from '../../src/lib/crypto';
import { presentEventData } from '../../src/services/webhooks/delivery.service';
import { toAuditEventRow } from '../../src/db/repositories/audit-events.repo';
import { makeSignedInUser, makeUser, signIn, uniqueEmail } from '../helpers/factories';
import { makeRole } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §20 from the directories' side: the forms Microsoft Entra ID and Okta send (capitalised ops, "False"
 * strings, path-less value maps, filtered member removals; their documented requests are replayed from byte copies in
 * scim-vendor-fixtures.test.ts), RFC 7644's examples, connections and their tokens, deprovisioning, and groups mapped
 * to roles.
 */

const SCIM_JSON = 'application/scim+json';
const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

let t: TestApp;
let admin: Awaited<ReturnType<typeof makeSignedInUser>>;

beforeAll(async () => {
  t = await createTestApp();
  admin = await makeSignedInUser(t, ['super_admin']);
});
afterAll(async () => t.close());

async function newConnection(name = 'Entra ID') {
  const res = await request(t.app)
    .post('/api/admin/scim-connections')
    .set('Authorization', admin.bearer)
    .send({ name, description: 'tests' });
  expect(res.status).toBe(201);
  return { id: res.body.connection.id as string, token: res.body.token as string, name };
}

/** A SCIM client for one connection, sending what directories send. */
function scim(token: string) {
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${token}`).set('Accept', SCIM_JSON);
  return {
    get: (path: string) => auth(request(t.app).get(`/scim/v2${path}`)),
    delete: (path: string) => auth(request(t.app).delete(`/scim/v2${path}`)),
    post: (path: string, body: unknown) =>
      auth(request(t.app).post(`/scim/v2${path}`))
        .set('Content-Type', SCIM_JSON)
        .send(JSON.stringify(body)),
    put: (path: string, body: unknown) =>
      auth(request(t.app).put(`/scim/v2${path}`))
        .set('Content-Type', SCIM_JSON)
        .send(JSON.stringify(body)),
    patch: (path: string, body: unknown) =>
      auth(request(t.app).patch(`/scim/v2${path}`))
        .set('Content-Type', SCIM_JSON)
        .send(JSON.stringify(body)),
  };
}

function expectScimError(res: request.Response, status: number, scimType?: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
  expect(res.body.schemas).toEqual([ERROR]);
  expect(res.body.status).toBe(String(status));
  if (scimType) expect(res.body.scimType).toBe(scimType);
  else expect(res.body.scimType).toBeUndefined();
  expect(typeof res.body.detail).toBe('string');
}

describe('SCIM connections', () => {
  it('shows the token once, stores only its hash, audits the connection as actor, and a revoked token stops at once', async () => {
    const c = await newConnection('Okta');
    expect(c.token).toMatch(/^scim_/);
    const row = await t.db('scim_connections').where({ id: c.id }).first();
    expect(row.token_hash).toBe(sha256Hex(c.token));
    expect(JSON.stringify(row)).not.toContain(c.token);

    const list = await request(t.app).get('/api/admin/scim-connections').set('Authorization', admin.bearer);
    expect(list.status).toBe(200);
    expect(list.body.connections.find((x: { id: string }) => x.id === c.id)).toMatchObject({ name: 'Okta', description: 'tests' });
    expect(JSON.stringify(list.body)).not.toContain(c.token);

    const created = await scim(c.token).post('/Users', { schemas: [CORE_USER], userName: uniqueEmail('actor') });
    expect(created.status).toBe(201);
    const audit = await request(t.app).get(`/api/admin/audit-events?type=user.created`).set('Authorization', admin.bearer);
    const event = audit.body.events.find((e: { subject_id: string }) => e.subject_id === created.body.id);
    expect(event.actor).toEqual({ type: 'scim_connection', id: c.id, name: 'Okta' });

    expect((await request(t.app).delete(`/api/admin/scim-connections/${c.id}`).set('Authorization', admin.bearer)).status).toBe(204);
    expectScimError(await scim(c.token).get('/Users'), 401);
  });

  it('refuses requests without a token, with an unknown one, and with a user access token', async () => {
    expectScimError(await request(t.app).get('/scim/v2/Users'), 401);
    expectScimError(await scim('scim_not-a-real-token').get('/Users'), 401);
    expectScimError(await scim(admin.accessToken).get('/Users'), 401);
  });

  it('needs system:manage_users, and a name', async () => {
    const plain = await makeSignedInUser(t);
    expect((await request(t.app).get('/api/admin/scim-connections').set('Authorization', plain.bearer)).status).toBe(403);
    const bad = await request(t.app).post('/api/admin/scim-connections').set('Authorization', admin.bearer).send({ name: '' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_error');
  });
});

// The documented requests themselves are replayed from byte copies in test/e2e/scim-vendor-fixtures.test.ts; these two
// sequences add the forms the directories send beyond those pages (string booleans, path-less value maps, filtered
// member removals, the enterprise extension).
describe('Microsoft Entra ID request forms beyond its documented examples', () => {
  it('creates, finds, updates, disables and deletes a user, and a group with members', async () => {
    const { token } = await newConnection('Entra ID');
    const client = scim(token);
    const userName = `Test_User_${Date.now()}`;
    const email = uniqueEmail('entra');

    // 1. Does the user exist? Entra filters by userName (and gets an empty list).
    const none = await client.get(`/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
    expect(none.status).toBe(200);
    expect(none.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(none.body).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: [],
    });

    // 2. Create: a userName that is not an email address, so the primary work email is the account's address.
    const created = await client.post('/Users', {
      schemas: [CORE_USER, ENTERPRISE],
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
      userName,
      active: true,
      emails: [{ primary: true, type: 'work', value: email }],
      meta: { resourceType: 'User' },
      name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
      roles: [],
      [ENTERPRISE]: { department: 'Sales', employeeNumber: '701984' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.headers.location).toBe(`http://sso.test/scim/v2/Users/${id}`);
    expect(created.headers.etag).toBe(created.body.meta.version);
    expect(created.body).toMatchObject({
      schemas: [CORE_USER, ENTERPRISE],
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
      // The directory's userName is kept and answered as sent; the account's address is the primary email.
      userName,
      name: { givenName: 'givenName', familyName: 'familyName', formatted: 'givenName familyName' },
      emails: [{ value: email, type: 'work', primary: true }],
      active: true,
      [ENTERPRISE]: { department: 'Sales', employeeNumber: '701984' },
      meta: { resourceType: 'User', location: `http://sso.test/scim/v2/Users/${id}` },
    });
    // The account exists in the admin API.
    const account = await request(t.app).get(`/api/users/${id}`).set('Authorization', admin.bearer);
    expect(account.status).toBe(200);
    expect(account.body.user.email).toBe(email);

    // 3. Get by id, by filter on userName (the account's email, case-insensitively) and by externalId.
    expect((await client.get(`/Users/${id}`)).body.id).toBe(id);
    const byName = await client.get(`/Users?filter=${encodeURIComponent(`userName eq "${userName.toUpperCase()}"`)}`);
    expect(byName.body.Resources.map((r: { id: string }) => r.id)).toEqual([id]);
    const byExternal = await client.get(`/Users?filter=${encodeURIComponent('externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"')}`);
    expect(byExternal.body.Resources.map((r: { id: string }) => r.id)).toEqual([id]);

    // 4. A duplicate create is 409 uniqueness.
    const again = await client.post('/Users', { schemas: [CORE_USER], userName: email });
    expectScimError(again, 409, 'uniqueness');

    // 5. PATCH as Entra sends it: capitalised ops, a filtered path, a name.
    const newEmail = uniqueEmail('entra-updated');
    const updated = await client.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'Replace', path: 'emails[type eq "work"].value', value: newEmail },
        { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
      ],
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ userName, emails: [{ value: newEmail }], name: { familyName: 'updatedFamilyName' } });
    expect(updated.body.meta.version).not.toBe(created.body.meta.version);
    expect((await t.db('users').where({ id }).first()).email).toBe(newEmail);

    // 6. Disable, as Entra sends it without the flag that fixes it: "False" as a string.
    const person = { email: newEmail, password: 'correct-horse-1' };
    await t
      .db('users')
      .where({ id })
      .update({ password_hash: await t.ctx.passwords.hash(person.password) });
    const session = await signIn(t, person);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${session.accessToken}`)).status).toBe(200);
    const disabled = await client.patch(`/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    expect(disabled.status).toBe(200);
    expect(disabled.body.active).toBe(false);
    // The live session ends at once, its refresh token too, and sign-in is refused.
    expect((await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${session.accessToken}`)).status).toBe(401);
    expect((await request(t.app).post('/api/auth/refresh-token').send({ refreshToken: session.refreshToken })).status).toBe(401);
    expect((await request(t.app).post('/api/auth/login').send(person)).status).not.toBe(200);

    // 7. Re-enable with a path-less value map: sign-in works again; the old session stays revoked.
    const enabled = await client.patch(`/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { active: true } }] });
    expect(enabled.body.active).toBe(true);
    expect((await request(t.app).post('/api/auth/login').send(person)).status).toBe(200);
    expect((await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${session.accessToken}`)).status).toBe(401);

    // 8. Groups: create, find by displayName without members, rename, add and remove a member, delete.
    const group = await client.post('/Groups', {
      schemas: [GROUP, 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group'],
      externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
      displayName: 'displayName',
      meta: { resourceType: 'Group' },
    });
    expect(group.status).toBe(201);
    const gid = group.body.id as string;
    expect(group.body).toMatchObject({ schemas: [GROUP], displayName: 'displayName', members: [] });
    const noMembers = await client.get(`/Groups/${gid}?excludedAttributes=members`);
    expect(noMembers.body.members).toBeUndefined();
    expect(noMembers.body.displayName).toBe('displayName');
    const found = await client.get(`/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "displayName"')}`);
    expect(found.body.Resources.map((g: { id: string }) => g.id)).toEqual([gid]);
    const renamed = await client.patch(`/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'displayName', value: '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName' }],
    });
    expect(renamed.body.displayName).toBe('1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName');
    const added = await client.patch(`/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: id }] }],
    });
    expect(added.status).toBe(200);
    expect(added.body.members.map((m: { value: string }) => m.value)).toEqual([id]);
    const member = await client.get(`/Groups?filter=${encodeURIComponent(`members[value eq "${id}"]`)}&excludedAttributes=members`);
    expect(member.body.totalResults).toBe(1);
    const removed = await client.patch(`/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: id }] }],
    });
    expect(removed.body.members).toEqual([]);
    expect((await client.delete(`/Groups/${gid}`)).status).toBe(204);
    expectScimError(await client.get(`/Groups/${gid}`), 404);

    // 9. Delete the user: the account is gone and its address is free again.
    expect((await client.delete(`/Users/${id}`)).status).toBe(204);
    expectScimError(await client.get(`/Users/${id}`), 404);
    expect((await request(t.app).get(`/api/users/${id}`).set('Authorization', admin.bearer)).status).toBe(404);
    const reused = await client.post('/Users', { schemas: [CORE_USER], userName: newEmail });
    expect(reused.status).toBe(201);

    // Every change is in the audit trail, with the connection as actor.
    const types = (await t.db('audit_events').where({ actor_type: 'scim_connection' }).select('type')).map((r: { type: string }) => r.type);
    expect(types).toEqual(
      expect.arrayContaining([
        'user.created',
        'user.changed',
        'user.deactivated',
        'user.activated',
        'user.deleted',
        'scim.group.created',
        'scim.group.changed',
        'scim.group.deleted',
      ]),
    );
  });
});

describe('Okta request forms beyond its documented examples', () => {
  it('checks, creates, reads, replaces with PUT, deactivates with PATCH, and pushes groups', async () => {
    const { token } = await newConnection('Okta');
    const client = scim(token);
    const email = uniqueEmail('okta');

    const check = await client.get(`/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}&startIndex=1&count=100`);
    expect(check.body.totalResults).toBe(0);
    const created = await client.post('/Users', {
      schemas: [CORE_USER],
      userName: email,
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: email, type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      groups: [],
      password: '1mz050nq',
      active: true,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({ userName: email, displayName: 'Test User', externalId: '00ujl29u0le5T6Aj10h7', active: true });
    expect(JSON.stringify(created.body)).not.toContain('1mz050nq');

    const got = await client.get(`/Users/${id}`);
    expect(got.body.name).toMatchObject({ givenName: 'Test', familyName: 'User' });

    // Okta replaces the whole user with PUT.
    const put = await client.put(`/Users/${id}`, {
      schemas: [CORE_USER],
      id,
      userName: email,
      name: { givenName: 'Another', familyName: 'User' },
      emails: [{ primary: true, value: email, type: 'work' }],
      displayName: 'Another User',
      externalId: '00ujl29u0le5T6Aj10h7',
      active: true,
      meta: { resourceType: 'User' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: { givenName: 'Another' }, displayName: 'Another User' });

    // Okta deactivates with a path-less replace.
    const off = await client.patch(`/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { active: false } }] });
    expect(off.body.active).toBe(false);
    expect((await t.db('users').where({ id }).first()).is_active).toBe(false);

    // Groups: Okta pushes a group with members, renames it with a path-less replace, and changes members.
    const other = await client.post('/Users', { schemas: [CORE_USER], userName: uniqueEmail('okta-2') });
    const group = await client.post('/Groups', { schemas: [GROUP], displayName: 'Test SCIMv2', members: [{ value: id, display: email }] });
    expect(group.status).toBe(201);
    const gid = group.body.id as string;
    const renamed = await client.patch(`/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', value: { id: gid, displayName: 'Test SCIMv2 renamed' } }],
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.displayName).toBe('Test SCIMv2 renamed');
    const changed = await client.patch(`/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'remove', path: `members[value eq "${id}"]` },
        { op: 'add', path: 'members', value: [{ value: other.body.id, display: other.body.userName }] },
      ],
    });
    expect(changed.status).toBe(200);
    expect(changed.body.members.map((m: { value: string }) => m.value)).toEqual([other.body.id]);
    // A member that is not a user is refused.
    const unknown = await client.patch(`/Groups/${gid}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'add', path: 'members', value: [{ value: '00000000-0000-4000-8000-000000000000' }] }],
    });
    expectScimError(unknown, 400, 'invalidValue');
  });
});

describe('RFC 7644 behaviour', () => {
  let client: ReturnType<typeof scim>;
  beforeAll(async () => {
    client = scim((await newConnection('RFC')).token);
  });

  it('substring filters are answered by trigram indexes, with the same results as a scan', async () => {
    const tag = `t${Date.now()}`;
    // A directory whose userName is not an email address (kept per connection) and one whose userName is the email.
    const kept = await client.post('/Users', {
      schemas: [CORE_USER],
      userName: `EMP-${tag}-7`,
      emails: [{ value: `kept.${tag}@example.com`, primary: true }],
      name: { givenName: 'Kepa', familyName: `Zu${tag}` },
    });
    const plain = await client.post('/Users', { schemas: [CORE_USER], userName: `plain.${tag}@example.com`, name: { givenName: 'Pia' } });
    const find = async (filter: string) =>
      (await client.get(`/Users?filter=${encodeURIComponent(filter)}`)).body.Resources?.map((r: { id: string }) => r.id).sort() ?? [];
    expect(await find(`userName co "emp-${tag}"`)).toEqual([kept.body.id]);
    // The kept userName hides the email from userName (and only from userName).
    expect(await find(`userName co "kept.${tag}"`)).toEqual([]);
    expect(await find(`emails.value co "kept.${tag}"`)).toEqual([kept.body.id]);
    expect(await find(`userName sw "plain.${tag}"`)).toEqual([plain.body.id]);
    expect(await find(`name.familyName ew "${tag}"`)).toEqual([kept.body.id]);
    expect(await find(`name.formatted co "kepa zu${tag}"`)).toEqual([kept.body.id]);
    expect(await find(`not (name.givenName co "kepa") and userName co "${tag}"`)).toEqual([plain.body.id]);

    // The plans: with sequential scans priced out, each of these reaches an index (trigram where it is a substring).
    const trgm = (await t.db.raw(`select 1 from pg_extension where extname = 'pg_trgm'`)).rows.length === 1;
    if (!trgm) throw new Error('pg_trgm is expected in the test database (the migrations create it)');
    const plans: Record<string, string> = {};
    const capture = (q: { sql: string; bindings: unknown[] }) => {
      // The count of the filter's matches (every list answers it): the whole filter, no order to walk an index by.
      if (/from "users" as "u"/.test(q.sql) && /count\(/.test(q.sql)) plans.last = JSON.stringify([q.sql, q.bindings]);
    };
    t.db.on('query', capture);
    const planOf = async (filter: string) => {
      await find(filter);
      const [sql, bindings] = JSON.parse(plans.last!) as [string, string[]];
      return t.db.transaction(async (trx) => {
        await trx.raw('set local enable_seqscan = off');
        return JSON.stringify((await trx.raw(`explain (format json) ${sql.replace(/\$\d+/g, '?')}`, bindings)).rows);
      });
    };
    try {
      // (A Seq Scan left in a plan with sequential scans disabled means that no index could answer that part.)
      for (const filter of [`name.familyName co "zu${tag}"`, `emails[value ew "${tag}@example.com"]`, `userName co "emp-${tag}"`]) {
        const plan = await planOf(filter);
        expect([filter, plan.includes('users_search_trgm_idx'), plan.includes('"Seq Scan"')]).toEqual([filter, true, false]);
      }
      const groups = await t.db.transaction(async (trx) => {
        await trx.raw('set local enable_seqscan = off');
        const sql = `explain (format json) select count(*) from scim_groups g where lower(g.display_name) like ?`;
        return JSON.stringify((await trx.raw(sql, [`%${tag}%`])).rows);
      });
      expect(groups).toContain('scim_groups_display_name_trgm_idx');
    } finally {
      t.db.removeListener('query', capture);
    }
  });

  it('POST /Users/.search and /Groups/.search (RFC 7644 §3.4.3): the query in a body; malformed bodies are invalidSyntax', async () => {
    const email = uniqueEmail('searched');
    const created = await client.post('/Users', { schemas: [CORE_USER], userName: email, name: { givenName: 'Sea', familyName: 'Rched' } });
    expect(created.status).toBe(201);
    const group = await client.post('/Groups', { schemas: [GROUP], displayName: 'Searchers', members: [{ value: created.body.id }] });
    const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

    const users = await client.post('/Users/.search', {
      schemas: [SEARCH],
      attributes: ['userName', 'name.familyName'],
      filter: `userName eq "${email.toUpperCase()}" and name.familyName sw "rch"`,
      startIndex: 1,
      count: 10,
      sortBy: 'userName',
    });
    expect(users.status).toBe(200);
    expect(users.type).toBe('application/scim+json');
    expect(users.body).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 1,
      startIndex: 1,
      itemsPerPage: 1,
      Resources: [{ schemas: [CORE_USER], id: created.body.id, userName: email, name: { familyName: 'Rched' } }],
    });
    const none = await client.post('/Users/.search', { schemas: [SEARCH], filter: 'userName eq "nobody@example.test"' });
    expect(none.body).toMatchObject({ totalResults: 0, Resources: [] });

    const groups = await client.post('/Groups/.search', {
      schemas: [SEARCH],
      filter: 'displayName eq "searchers"',
      excludedAttributes: ['members'],
    });
    expect(groups.status).toBe(200);
    expect(groups.body.totalResults).toBe(1);
    expect(groups.body.Resources[0]).toMatchObject({ id: group.body.id, displayName: 'Searchers' });
    expect(groups.body.Resources[0].members).toBeUndefined();

    for (const body of [
      { filter: 'userName eq "x"' },
      { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'] },
      { schemas: [SEARCH], count: 'ten' },
      { schemas: [SEARCH], attributes: 'userName' },
      [],
    ]) {
      expectScimError(await client.post('/Users/.search', body), 400, 'invalidSyntax');
    }
    expectScimError(await client.post('/Users/.search', { schemas: [SEARCH], filter: 'userName xx "a"' }), 400, 'invalidFilter');
    const noToken = await request(t.app)
      .post('/scim/v2/Users/.search')
      .send({ schemas: [SEARCH] });
    expect(noToken.status).toBe(401);
  });

  it("Users carry the read-only groups attribute (this connection's groups only); a PUT sending groups changes no membership", async () => {
    const other = scim((await newConnection('Other directory')).token);
    const created = await client.post('/Users', { schemas: [CORE_USER], userName: uniqueEmail('grouped') });
    const id = created.body.id as string;
    expect(created.body.groups).toBeUndefined();
    const g1 = await client.post('/Groups', { schemas: [GROUP], displayName: 'Alpha', members: [{ value: id }] });
    const g2 = await client.post('/Groups', { schemas: [GROUP], displayName: 'Beta', members: [{ value: id }] });
    await other.post('/Groups', { schemas: [GROUP], displayName: 'Elsewhere', members: [{ value: id }] });
    const before = await client.get(`/Users/${id}`);
    expect(before.body.groups).toEqual([
      { value: g1.body.id, $ref: `${t.config.baseUrl}/scim/v2/Groups/${g1.body.id}`, display: 'Alpha', type: 'direct' },
      { value: g2.body.id, $ref: `${t.config.baseUrl}/scim/v2/Groups/${g2.body.id}`, display: 'Beta', type: 'direct' },
    ]);
    expect((await client.get(`/Users?filter=id eq "${id}"&attributes=groups`)).body.Resources[0].groups).toHaveLength(2);
    expect((await other.get(`/Users/${id}`)).body.groups.map((g: { display: string }) => g.display)).toEqual(['Elsewhere']);
    // Read-only: what a PUT or PATCH says about groups is ignored (Okta sends "groups": [] in its PUT).
    const put = await client.put(`/Users/${id}`, { schemas: [CORE_USER], userName: created.body.userName, groups: [] });
    expect(put.status).toBe(200);
    expect(put.body.groups).toHaveLength(2);
    // Leaving a group changes the user's representation, and so its version.
    await client.patch(`/Groups/${g1.body.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }] });
    const after = await client.get(`/Users/${id}`);
    expect(after.body.groups.map((g: { display: string }) => g.display)).toEqual(['Beta']);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    const schema = await client.get('/Schemas/urn:ietf:params:scim:schemas:core:2.0:User');
    expect(schema.body.attributes.find((a: { name: string }) => a.name === 'groups')).toMatchObject({
      mutability: 'readOnly',
      multiValued: true,
    });
  });

  it('serves the discovery documents', async () => {
    const config = await client.get('/ServiceProviderConfig');
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({
      patch: { supported: true },
      bulk: { supported: false },
      sort: { supported: false },
      etag: { supported: true },
      filter: { supported: true },
    });
    const types = await client.get('/ResourceTypes');
    expect(types.body.Resources.map((r: { id: string }) => r.id)).toEqual(['User', 'Group']);
    expect((await client.get('/ResourceTypes/User')).body.schemaExtensions).toEqual([{ schema: ENTERPRISE, required: false }]);
    const schemas = await client.get('/Schemas');
    expect(schemas.body.Resources.map((r: { id: string }) => r.id)).toEqual([CORE_USER, GROUP, ENTERPRISE]);
    expect((await client.get(`/Schemas/${CORE_USER}`)).body.attributes.map((a: { name: string }) => a.name)).toContain('userName');
    expectScimError(await client.get('/Schemas/urn:nope'), 404);
    expectScimError(await client.get('/Nothing'), 404);
  });

  it('filters with the full grammar, pages with startIndex/count, and projects attributes', async () => {
    const tag = `f${Date.now()}`;
    const ids: string[] = [];
    for (const [given, family, active] of [
      ['Barbara', 'Jensen', true],
      ['Babs', 'Jensen', false],
      ['Carl', 'Other', true],
    ] as const) {
      const res = await client.post('/Users', {
        schemas: [CORE_USER],
        userName: `${given.toLowerCase()}.${tag}@example.com`,
        name: { givenName: given, familyName: family },
        active,
        externalId: `${tag}-${given}`,
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const find = async (filter: string) =>
      (await client.get(`/Users?filter=${encodeURIComponent(filter)}`)).body.Resources?.map((r: { id: string }) => r.id).sort() ?? [];
    expect(await find(`userName sw "ba" and userName ew "${tag}@example.com"`)).toEqual([ids[0], ids[1]].sort());
    expect(await find(`name.familyName eq "jensen" and active eq true and userName co "${tag}"`)).toEqual([ids[0]]);
    expect(await find(`(name.givenName eq "Carl" or name.givenName eq "Babs") and userName co "${tag}"`)).toEqual([ids[1], ids[2]].sort());
    expect(await find(`not (active eq true) and userName co "${tag}"`)).toEqual([ids[1]]);
    expect(await find(`emails[type eq "work" and value co "carl.${tag}"]`)).toEqual([ids[2]]);
    expect(await find(`emails.value co "carl.${tag}" and externalId pr`)).toEqual([ids[2]]);
    expect(await find(`externalId eq "${tag}-Carl"`)).toEqual([ids[2]]);
    expect(await find(`externalId eq "${tag}-carl"`)).toEqual([]); // externalId is caseExact
    expect(await find(`userName ne "carl.${tag}@example.com" and userName co "${tag}"`)).toEqual([ids[0], ids[1]].sort());
    expect(await find(`meta.created ge "2000-01-01T00:00:00Z" and userName co "${tag}"`)).toHaveLength(3);
    expect(await find(`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "carl.${tag}@example.com"`)).toEqual([ids[2]]);
    // A % in the value matches itself only.
    expect(await find(`userName co "%"`)).toEqual([]);

    const page = await client.get(`/Users?filter=${encodeURIComponent(`userName co "${tag}"`)}&startIndex=2&count=1`);
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 });
    expect(page.body.Resources[0].id).toBe(ids[1]);
    const countOnly = await client.get(`/Users?filter=${encodeURIComponent(`userName co "${tag}"`)}&count=0`);
    expect(countOnly.body).toMatchObject({ totalResults: 3, itemsPerPage: 0, Resources: [] });

    const projected = await client.get(`/Users/${ids[0]}?attributes=userName,name.givenName`);
    expect(projected.body).toEqual({
      schemas: [CORE_USER],
      id: ids[0],
      userName: `barbara.${tag}@example.com`,
      name: { givenName: 'Barbara' },
    });
    const excluded = await client.get(`/Users/${ids[0]}?excludedAttributes=emails,meta,name.familyName`);
    expect(excluded.body.emails).toBeUndefined();
    expect(excluded.body.meta).toBeUndefined();
    expect(excluded.body.name).toEqual({ givenName: 'Barbara', formatted: 'Barbara Jensen' });
  });

  it('answers malformed filters and bodies with 400 SCIM errors', async () => {
    for (const filter of [
      'userName eq',
      'userName zz "x"',
      'nope eq "x"',
      'active eq "yes"',
      'meta.created gt "yesterday"',
      'emails eq "x"',
      '(((',
    ]) {
      expectScimError(await client.get(`/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
    }
    expectScimError(await client.get('/Users?startIndex=abc'), 400, 'invalidValue');
    expectScimError(await client.post('/Users', { schemas: [CORE_USER] }), 400, 'invalidValue');
    expectScimError(await client.post('/Users', { schemas: [CORE_USER], userName: 'not-an-email' }), 400, 'invalidValue');
    const malformed = await request(t.app)
      .post('/scim/v2/Users')
      .set('Authorization', `Bearer ${(await newConnection()).token}`)
      .set('Content-Type', SCIM_JSON)
      .send('{"userName":');
    expectScimError(malformed, 400, 'invalidSyntax');
    const u = await client.post('/Users', { schemas: [CORE_USER], userName: uniqueEmail('patch') });
    expectScimError(await client.patch(`/Users/${u.body.id}`, { Operations: [] }), 400, 'invalidSyntax');
    expectScimError(
      await client.patch(`/Users/${u.body.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'frob', path: 'active', value: true }] }),
      400,
      'invalidSyntax',
    );
    expectScimError(
      await client.patch(`/Users/${u.body.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'emails[[', value: 'x' }] }),
      400,
      'invalidPath',
    );
    expectScimError(
      await client.patch(`/Users/${u.body.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: 'maybe' }] }),
      400,
      'invalidValue',
    );
    expectScimError(await client.get('/Users/not-a-uuid'), 404);
  });

  it('supports ETags: meta.version equals the ETag header, If-Match on a stale version is 412', async () => {
    const u = await client.post('/Users', { schemas: [CORE_USER], userName: uniqueEmail('etag') });
    const got = await client.get(`/Users/${u.body.id}`);
    expect(got.headers.etag).toBe(got.body.meta.version);
    expect(got.body.meta.version).toBe(u.body.meta.version);
    const first = await client
      .patch(`/Users/${u.body.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: 'One' }] })
      .set('If-Match', got.headers.etag);
    expect(first.status).toBe(200);
    const stale = await client
      .patch(`/Users/${u.body.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: 'Two' }] })
      .set('If-Match', got.headers.etag);
    expectScimError(stale, 412);
    expect((await client.get(`/Users/${u.body.id}`)).body.displayName).toBe('One');
    expectScimError(await client.delete(`/Users/${u.body.id}`).set('If-Match', got.headers.etag), 412);
  });
});

describe('admin-tier accounts are managed here, not by a directory', () => {
  it('refuses to change, deactivate or delete an account holding an admin-tier role (403 without scimType)', async () => {
    const client = scim((await newConnection('Admins')).token);
    const manager = await makeUser(t, { roles: ['manager'] });
    const seen = await client.get(`/Users?filter=${encodeURIComponent(`userName eq "${manager.email}"`)}`);
    expect(seen.body.totalResults).toBe(1);
    expectScimError(
      await client.patch(`/Users/${manager.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] }),
      403,
    );
    expectScimError(await client.put(`/Users/${manager.id}`, { schemas: [CORE_USER], userName: manager.email, active: false }), 403);
    expectScimError(await client.delete(`/Users/${manager.id}`), 403);
    expect((await t.db('users').where({ id: manager.id }).first()).is_active).toBe(true);
  });
});

describe('an administrator by permission is managed here too (CONTRACT §23)', () => {
  it('refuses to take over an account whose assigned global role grants a permission, whatever its name', async () => {
    const client = scim((await newConnection('Helpdesk')).token);
    const role = await makeRole(t, { name: `helpdesk-${Date.now()}`, permissions: ['users:manage_roles'] });
    const helpdesk = await makeUser(t);
    await t.db('user_roles').insert({ user_id: helpdesk.id, role_id: role.id });
    // The takeover: the directory points the account at another mailbox (then "forgot password"), or ends it.
    const rename = await client.patch(`/Users/${helpdesk.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'userName', value: uniqueEmail('attacker') }],
    });
    expectScimError(rename, 403);
    expect(rename.body.detail).toContain('administrator rights');
    expectScimError(await client.put(`/Users/${helpdesk.id}`, { schemas: [CORE_USER], userName: uniqueEmail('x'), active: false }), 403);
    expectScimError(await client.delete(`/Users/${helpdesk.id}`), 403);
    const row = await t.db('users').where({ id: helpdesk.id }).first();
    expect(row).toMatchObject({ email: helpdesk.email, is_active: true });
    // A deactivated role still counts: reactivating it would hand the rights back.
    await t.db('roles').where({ id: role.id }).update({ is_active: false });
    expectScimError(await client.delete(`/Users/${helpdesk.id}`), 403);
  });

  it('a role held only through one of the directory’s own groups does not stop the directory (it could drop the membership)', async () => {
    const client = scim((await newConnection('Readers again')).token);
    const role = await makeRole(t, { permissions: ['users:read'] });
    const created = await client.post('/Users', { schemas: [CORE_USER], userName: uniqueEmail('reader') });
    const id = created.body.id as string;
    const group = await client.post('/Groups', { schemas: [GROUP], displayName: 'Readers again', members: [{ value: id }] });
    await request(t.app)
      .put(`/api/admin/scim-groups/${group.body.id}/roles`)
      .set('Authorization', admin.bearer)
      .send({ role_ids: [role.id] })
      .expect(200);
    const off = await client.patch(`/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] });
    expect(off.status).toBe(200);
    expect((await t.db('users').where({ id }).first()).is_active).toBe(false);
  });
});

describe('groups mapped to roles', () => {
  it('membership grants the mapped roles live, and removing the member or the mapping takes them away', async () => {
    const client = scim((await newConnection('Roles')).token);
    const role = await makeRole(t, { permissions: ['users:read'] });
    const created = await client.post('/Users', { schemas: [CORE_USER], userName: uniqueEmail('member') });
    const id = created.body.id as string;
    await t
      .db('users')
      .where({ id })
      .update({ password_hash: await t.ctx.passwords.hash('correct-horse-1') });
    const session = await signIn(t, { email: created.body.userName, password: 'correct-horse-1' });
    const canRead = async () => (await request(t.app).get('/api/users').set('Authorization', `Bearer ${session.accessToken}`)).status;
    expect(await canRead()).toBe(403);

    const group = await client.post('/Groups', { schemas: [GROUP], displayName: 'Readers', members: [{ value: id }] });
    const gid = group.body.id as string;
    const mapped = await request(t.app)
      .put(`/api/admin/scim-groups/${gid}/roles`)
      .set('Authorization', admin.bearer)
      .send({ role_ids: [role.id] });
    expect(mapped.status).toBe(200);
    expect(mapped.body.group).toMatchObject({ id: gid, display_name: 'Readers', role_ids: [role.id] });
    expect(
      (await request(t.app).get(`/api/admin/scim-groups/${gid}/roles`).set('Authorization', admin.bearer)).body.group.role_ids,
    ).toEqual([role.id]);
    // Same session, next request: granted.
    expect(await canRead()).toBe(200);

    // Membership removed by the directory: gone at the next request.
    await client.patch(`/Groups/${gid}`, { schemas: [PATCH_OP], Operations: [{ op: 'Remove', path: `members[value eq "${id}"]` }] });
    expect(await canRead()).toBe(403);
    await client.patch(`/Groups/${gid}`, { schemas: [PATCH_OP], Operations: [{ op: 'Add', path: 'members', value: [{ value: id }] }] });
    expect(await canRead()).toBe(200);
    // Mapping removed by an admin: gone at the next request.
    await request(t.app).put(`/api/admin/scim-groups/${gid}/roles`).set('Authorization', admin.bearer).send({ role_ids: [] });
    expect(await canRead()).toBe(403);

    const events = await t.db('audit_events').where({ type: 'scim.group.roles_changed', subject_id: gid });
    expect(events).toHaveLength(2);
  });

  it('GET /api/users/:id/roles lists roles granted by groups, marked with the groups; super_admin never comes through one', async () => {
    const connection = await newConnection('Roles shown');
    const client = scim(connection.token);
    const viaGroup = await makeRole(t, { permissions: ['users:read'] });
    const both = await makeRole(t, { application: 'crm' });
    const created = await client.post('/Users', { schemas: [CORE_USER], userName: uniqueEmail('shown') });
    const id = created.body.id as string;
    const groupA = await client.post('/Groups', { schemas: [GROUP], displayName: 'A readers', members: [{ value: id }] });
    const groupB = await client.post('/Groups', { schemas: [GROUP], displayName: 'B crm', members: [{ value: id }] });
    for (const [gid, roles] of [
      [groupA.body.id, [viaGroup.id, both.id]],
      [groupB.body.id, [both.id]],
    ] as const) {
      await request(t.app)
        .put(`/api/admin/scim-groups/${gid}/roles`)
        .set('Authorization', admin.bearer)
        .send({ role_ids: roles })
        .expect(200);
    }
    // A mapping to super_admin written behind the API's back still grants nothing (the rule, not only the API, refuses it).
    const superAdmin = await t.db('roles').where({ name: 'super_admin' }).whereNull('application').first('id');
    await t.db('scim_group_roles').insert({ group_id: groupA.body.id, role_id: superAdmin.id });
    await request(t.app).post(`/api/users/${id}/roles`).set('Authorization', admin.bearer).send({ role_id: both.id }).expect(201);

    const shown = async (path: string) => {
      const res = await request(t.app).get(path).set('Authorization', admin.bearer);
      expect(res.status).toBe(200);
      return res.body.roles as Array<{
        id: string;
        name: string;
        assigned: boolean;
        scim_groups: Array<{ id: string; display_name: string }>;
      }>;
    };
    for (const path of [`/api/users/${id}/roles`, `/api/rbac/users/${id}/roles`]) {
      const roles = await shown(path);
      expect(roles.map((r) => [r.id, r.assigned, r.scim_groups.map((g) => g.display_name)])).toEqual([
        [viaGroup.id, false, ['A readers']],
        [both.id, true, ['A readers', 'B crm']],
      ]);
      expect(roles[0]!.scim_groups[0]).toEqual({ id: groupA.body.id, display_name: 'A readers', connection_id: connection.id });
    }
    // The same rule decides what the account may do: the group's role, never super_admin.
    const access = (await request(t.app).get(`/api/users/${id}`).set('Authorization', admin.bearer)).body.user;
    expect(access.roles.map((r: { name: string }) => r.name).sort()).toEqual([both.name, viaGroup.name].sort());

    // Out of group A: its roles go from the list at once.
    await client.patch(`/Groups/${groupA.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Remove', path: `members[value eq "${id}"]` }],
    });
    expect((await shown(`/api/users/${id}/roles`)).map((r) => [r.id, r.assigned, r.scim_groups.map((g) => g.display_name)])).toEqual([
      [both.id, true, ['B crm']],
    ]);
  });

  it('refuses super_admin (400 validation_error), unknown roles, and callers without users:manage_roles', async () => {
    const client = scim((await newConnection('Refusals')).token);
    const group = await client.post('/Groups', { schemas: [GROUP], displayName: 'Everyone' });
    const superAdmin = await t.db('roles').where({ name: 'super_admin' }).whereNull('application').first('id');
    const refused = await request(t.app)
      .put(`/api/admin/scim-groups/${group.body.id}/roles`)
      .set('Authorization', admin.bearer)
      .send({ role_ids: [superAdmin.id] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('validation_error');
    const unknown = await request(t.app)
      .put(`/api/admin/scim-groups/${group.body.id}/roles`)
      .set('Authorization', admin.bearer)
      .send({ role_ids: ['00000000-0000-4000-8000-000000000000'] });
    expect(unknown.status).toBe(400);
    const plain = await makeSignedInUser(t);
    expect(
      (await request(t.app).put(`/api/admin/scim-groups/${group.body.id}/roles`).set('Authorization', plain.bearer).send({ role_ids: [] }))
        .status,
    ).toBe(403);
    expect(
      (await request(t.app).get('/api/admin/scim-groups/00000000-0000-4000-8000-000000000000/roles').set('Authorization', admin.bearer))
        .status,
    ).toBe(404);
  });
});

describe('every SCIM change is a webhook', () => {
  it('delivers user.* and scim.group.* events with the connection as actor', async () => {
    const hook = await request(t.app)
      .post('/api/admin/webhooks')
      .set('Authorization', admin.bearer)
      .send({ url: 'https://93.184.215.14/hook', events: ['user.*', 'scim.*'] });
    expect(hook.status).toBe(201);
    const c = await newConnection('Webhooks');
    const client = scim(c.token);
    const user = await client.post('/Users', { schemas: [CORE_USER], userName: uniqueEmail('hook') });
    const group = await client.post('/Groups', { schemas: [GROUP], displayName: 'Hooked', members: [{ value: user.body.id }] });
    await client.patch(`/Users/${user.body.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    const rows = await t
      .db('webhook_deliveries as d')
      .join('audit_events as e', 'e.id', 'd.event_id')
      .where('d.subscription_id', hook.body.webhook.id)
      .whereIn('e.subject_id', [user.body.id, group.body.id])
      .orderBy('d.id')
      .select('e.*');
    expect(rows.map((r: { type: string }) => r.type)).toEqual(['user.created', 'scim.group.created', 'user.deactivated', 'user.changed']);
    for (const row of rows)
      expect(presentEventData(toAuditEventRow(row)).actor).toEqual({ type: 'scim_connection', id: c.id, name: 'Webhooks' });
    expect(presentEventData(toAuditEventRow(rows[1])).detail).toMatchObject({
      display_name: 'Hooked',
      members_added: 1,
      added_user_ids: [user.body.id],
    });
  });
});

describe('concurrency', () => {
  it('two PATCHes of one group at once lose no member', async () => {
    const client = scim((await newConnection('Concurrent')).token);
    const members: string[] = [];
    for (let i = 0; i < 10; i++)
      members.push((await client.post('/Users', { schemas: [CORE_USER], userName: uniqueEmail(`c${i}`) })).body.id);
    const group = await client.post('/Groups', { schemas: [GROUP], displayName: 'Race' });
    const results = await Promise.all(
      members.map((value) =>
        client.patch(`/Groups/${group.body.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'Add', path: 'members', value: [{ value }] }] }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(members.map(() => 200));
    const after = await client.get(`/Groups/${group.body.id}`);
    expect(after.body.members.map((m: { value: string }) => m.value).sort()).toEqual([...members].sort());
  });
});
