import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { readFixture, replay as replayOn } from '../helpers/scim-fixtures';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The requests Microsoft Entra ID's and Okta's provisioning documentation show, replayed from byte copies of those pages
 * (test/fixtures/scim/*.http, each citing its source): every documented request, in the documented order, through the
 * real API. A replay changes only what it must (the bearer token, the media type of a body, the /scim/v2 prefix and
 * the encoding of a readable query, and the ids the page's server had assigned), and each answer is checked against
 * what the page says the server answers, and against the database.
 */

let t: TestApp;
let admin: Awaited<ReturnType<typeof makeSignedInUser>>;

beforeAll(async () => {
  t = await createTestApp();
  admin = await makeSignedInUser(t, ['super_admin']);
});
afterAll(async () => t.close());

async function newToken(name: string): Promise<string> {
  const res = await request(t.app).post('/api/admin/scim-connections').set('Authorization', admin.bearer).send({ name });
  expect(res.status).toBe(201);
  return res.body.token as string;
}

function replay(token: string, fixtures: ReturnType<typeof readFixture>, name: string, ids: Record<string, string> = {}) {
  return replayOn(t, token, fixtures, name, ids);
}

const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

describe('Microsoft Entra ID: "Develop and plan provisioning for a SCIM endpoint", every request example', () => {
  const fx = readFixture('entra-id-requests.http');

  it('holds the byte copies the header cites', () => {
    expect([...fx.keys()]).toEqual([
      'create-user',
      'get-user',
      'get-user-not-found',
      'get-user-by-query',
      'get-user-by-query-zero-results',
      'update-user-multi-valued',
      'update-user-single-valued',
      'disable-user',
      'delete-user',
      'create-group',
      'get-group',
      'get-group-by-display-name',
      'update-group-non-member-attributes',
      'update-group-add-members',
      'update-group-remove-members',
      'delete-group',
      'discover-schema',
    ]);
  });

  it('users: create, get, query, update multi- and single-valued attributes, disable, delete', async () => {
    const token = await newToken('Entra ID');
    const send = (name: string, ids?: Record<string, string>) => replay(token, fx, name, ids);

    const created = await send('create-user');
    expect(created.status).toBe(201);
    expect(created.type).toBe('application/scim+json');
    const id = created.body.id as string;
    expect(created.body).toMatchObject({
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
      userName: 'Test_User_00aa00aa-bb11-cc22-dd33-44ee44ee44ee',
      active: true,
      name: { familyName: 'familyName', givenName: 'givenName' },
    });
    expect(created.headers.location).toBe(`${t.config.baseUrl}/scim/v2/Users/${id}`);
    // userName is not an email address: the primary work email is the account's address.
    const account = await t.db('users').where({ id }).first();
    expect(account.email).toBe('test_user_11bb11bb-cc22-dd33-ee44-55ff55ff55ff@testuser.com');
    expect(account.is_active).toBe(true);

    const user = { '5d48a0a8e9f04aa38008': id, '6764549bef60420686bc': id, '5171a35d82074e068ce2': id };
    const got = await send('get-user', user);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(id);
    // The page's not-found example names an id this server never assigned (no replacement): 404 in the error schema.
    const missing = await send('get-user-not-found');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ schemas: [ERROR], status: '404' });

    const query = await send('get-user-by-query');
    expect(query.status).toBe(200);
    expect(query.body).toMatchObject({ schemas: [LIST], totalResults: 1, startIndex: 1 });
    expect(query.body.Resources[0].id).toBe(id);
    const zero = await send('get-user-by-query-zero-results');
    expect(zero.body).toEqual({ schemas: [LIST], totalResults: 0, Resources: [], startIndex: 1, itemsPerPage: 0 });

    const multi = await send('update-user-multi-valued', user);
    expect(multi.status).toBe(200);
    expect(multi.body.name).toMatchObject({ familyName: 'updatedFamilyName', givenName: 'givenName' });
    expect(multi.body.emails).toEqual([{ value: 'updatedemail@microsoft.com', type: 'work', primary: true }]);
    expect((await t.db('users').where({ id }).first()).last_name).toBe('updatedFamilyName');

    const single = await send('update-user-single-valued', user);
    expect(single.status).toBe(200);
    expect(single.body.userName).toBe('5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com');

    const disabled = await send('disable-user', user);
    expect(disabled.status).toBe(200);
    expect(disabled.body.active).toBe(false);
    expect((await t.db('users').where({ id }).first()).is_active).toBe(false);

    const deleted = await send('delete-user', user);
    expect(deleted.status).toBe(204);
    expect(await t.db('users').where({ id }).first()).toBeUndefined();
    expect((await send('get-user', user)).status).toBe(404);
  });

  it('groups: create, get without members, find by displayName, rename, add and remove a member, delete; schema discovery', async () => {
    const token = await newToken('Entra ID groups');
    const member = await request(t.app)
      .post('/scim/v2/Users')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/scim+json')
      .send(JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'entra.member@example.test' }));
    expect(member.status).toBe(201);
    const send = (name: string, ids?: Record<string, string>) => replay(token, fx, name, ids);

    const created = await send('create-group');
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({ displayName: 'displayName', externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159', members: [] });
    const group = {
      '40734ae655284ad3abcc': id,
      fa2ce26709934589afc5: id,
      a99962b9f99d4c4fac67: id,
      cdb1ce18f65944079d37: id,
      f648f8d5ea4e4cd38e9c: member.body.id as string,
    };

    const got = await send('get-group', group);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id, displayName: 'displayName' });
    expect(got.body.members).toBeUndefined();
    const found = await send('get-group-by-display-name');
    expect(found.body).toMatchObject({ schemas: [LIST], totalResults: 1 });
    expect(found.body.Resources[0].id).toBe(id);
    expect(found.body.Resources[0].members).toBeUndefined();

    const renamed = await send('update-group-non-member-attributes', group);
    expect(renamed.status).toBe(200);
    expect(renamed.body.displayName).toBe('1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName');

    const added = await send('update-group-add-members', group);
    expect(added.status).toBe(200);
    expect(await t.db('scim_group_members').where({ group_id: id }).pluck('user_id')).toEqual([member.body.id]);
    const removed = await send('update-group-remove-members', group);
    expect(removed.status).toBe(200);
    expect(await t.db('scim_group_members').where({ group_id: id })).toEqual([]);

    expect((await send('delete-group', group)).status).toBe(204);
    expect(await t.db('scim_groups').where({ id }).first()).toBeUndefined();

    const schemas = await send('discover-schema');
    expect(schemas.status).toBe(200);
    expect(schemas.body.schemas).toEqual([LIST]);
    expect(schemas.body.Resources.map((s: { id: string }) => s.id)).toEqual(
      expect.arrayContaining([
        'urn:ietf:params:scim:schemas:core:2.0:User',
        'urn:ietf:params:scim:schemas:core:2.0:Group',
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
      ]),
    );
  });
});

describe('Okta: "SCIM 2.0 Protocol Reference", every request example', () => {
  const fx = readFixture('okta-scim-2.0-requests.http');

  it('holds the byte copies the header cites, with the headers Okta sends', () => {
    expect(fx.size).toBe(15);
    for (const r of fx.values()) {
      expect(r.target.startsWith('/scim/v2/')).toBe(true);
      expect(r.headers).toEqual([
        ['User-Agent', 'Okta SCIM Client 1.0.0'],
        ['Authorization', '<Authorization credentials>'],
      ]);
    }
  });

  it('the user and group sequence, password and locale ignored, a second create refused with 409', async () => {
    const token = await newToken('Okta');
    const second = await request(t.app)
      .post('/scim/v2/Users')
      .set('Authorization', `Bearer ${token}`)
      .set('Content-Type', 'application/scim+json')
      .send(JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'okta.second@example.test' }));
    const send = (name: string, ids?: Record<string, string>) => replay(token, fx, name, ids);

    const none = await send('find-user');
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ schemas: [LIST], totalResults: 0, Resources: [] });

    const created = await send('create-user');
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({
      userName: 'test.user@okta.local',
      name: { givenName: 'Test', familyName: 'User' },
      displayName: 'Test User',
      externalId: '00ujl29u0le5T6Aj10h7',
      active: true,
    });
    expect(created.body.password).toBeUndefined();
    const account = await t.db('users').where({ id }).first();
    expect(account).toMatchObject({ email: 'test.user@okta.local', password_hash: null, is_active: true });

    // The documented answer to creating a user that exists: 409 in the error schema, which stops Okta's job.
    const again = await send('create-user-custom-attributes');
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ schemas: [ERROR], status: '409', scimType: 'uniqueness' });

    const found = await send('find-user');
    expect(found.body.totalResults).toBe(1);
    expect(found.body.Resources[0].id).toBe(id);
    const all = await send('list-users');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ startIndex: 1, totalResults: expect.any(Number), itemsPerPage: expect.any(Number) });
    expect(all.body.Resources.map((r: { id: string }) => r.id)).toContain(id);

    const user = { '23a35c27-23d3-4c03-b4c5-6443c09e7173': id, '89bb1940-b905-4575-9e7f-6f887cfb368e': second.body.id as string };
    expect((await send('get-user', user)).body.id).toBe(id);
    expect((await send('get-user-before-update', user)).status).toBe(200);
    const put = await send('update-user-put', user);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      id,
      userName: 'test.user@okta.local',
      name: { givenName: 'Another', familyName: 'User' },
      active: true,
    });
    expect((await t.db('users').where({ id }).first()).first_name).toBe('Another');

    const deactivated = await send('deactivate-user', user);
    expect(deactivated.status).toBe(200);
    expect(deactivated.body.active).toBe(false);
    expect((await t.db('users').where({ id }).first()).is_active).toBe(false);

    const group = await send('create-group');
    expect(group.status).toBe(201);
    const gid = group.body.id as string;
    expect(group.body).toMatchObject({ displayName: 'Test SCIMv2', members: [] });
    const ids = { ...user, 'abf4dd94-a4c0-4f67-89c9-76b03340cb9b': gid };
    expect((await send('list-groups')).body.Resources.map((g: { id: string }) => g.id)).toContain(gid);
    const byName = await send('find-group');
    expect(byName.body.totalResults).toBe(1);
    expect(byName.body.Resources[0].id).toBe(gid);
    expect((await send('get-group', ids)).body.id).toBe(gid);
    const renamed = await send('rename-group', ids);
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: gid, displayName: 'Test SCIMv2' });

    const replaced = await send('replace-members', ids);
    expect(replaced.status).toBe(200);
    expect((await t.db('scim_group_members').where({ group_id: gid }).pluck('user_id')).sort()).toEqual([id, second.body.id].sort());
    // The members' users carry the group (RFC 7643 groups, read-only).
    expect((await send('get-user', user)).body.groups).toEqual([expect.objectContaining({ value: gid, display: 'Test SCIMv2' })]);

    expect((await send('delete-group', ids)).status).toBe(204);
    expect(await t.db('scim_groups').where({ id: gid }).first()).toBeUndefined();
  });
});
