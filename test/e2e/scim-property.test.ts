import fc from 'fast-check';
import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * CONTRACT §20, property-based: whatever a directory sends as a filter, a query, a User, a Group or a PATCH, the
 * answer is below 500 and, when refused, a SCIM error (`schemas: [Error]`, `status` as a string, `detail`).
 */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);
const SEED = Number(process.env.PROPERTY_SEED ?? 20261129);
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

let t: TestApp;
let token: string;
let userId: string;
let groupId: string;

beforeAll(async () => {
  t = await createTestApp();
  const admin = await makeSignedInUser(t, ['super_admin']);
  token = (await request(t.app).post('/api/admin/scim-connections').set('Authorization', admin.bearer).send({ name: 'Property' })).body
    .token;
  const auth = `Bearer ${token}`;
  userId = (await request(t.app).post('/scim/v2/Users').set('Authorization', auth).send({ userName: 'property@example.test' })).body.id;
  groupId = (await request(t.app).post('/scim/v2/Groups').set('Authorization', auth).send({ displayName: 'Property' })).body.id;
});
afterAll(async () => t.close());

function expectScimAnswer(res: request.Response) {
  expect(res.status).toBeLessThan(500);
  if (res.status >= 400) {
    expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(res.body).toMatchObject({ schemas: [ERROR], status: String(res.status) });
    expect(typeof res.body.detail).toBe('string');
  }
}

/** Fragments a filter is made of, so generated filters are often nearly valid. */
const token_ = fc.oneof(
  fc.constantFrom(
    'userName',
    'emails',
    'emails.value',
    'members',
    'members.value',
    'meta.created',
    'active',
    'name.givenName',
    'externalId',
    'urn:ietf:params:scim:schemas:core:2.0:User:userName',
  ),
  fc.constantFrom(
    ' eq ',
    ' ne ',
    ' co ',
    ' sw ',
    ' ew ',
    ' gt ',
    ' ge ',
    ' lt ',
    ' le ',
    ' pr',
    ' and ',
    ' or ',
    'not ',
    '(',
    ')',
    '[',
    ']',
    ' ',
  ),
  fc.constantFrom('"x"', '"2020-01-01T00:00:00Z"', 'true', 'false', 'null', '12', '"%_\\\\"', '"\\""'),
  fc.string({ maxLength: 8 }),
);
const filter = fc.array(token_, { maxLength: 12 }).map((parts) => parts.join(''));

const json = fc.jsonValue({ maxDepth: 3 });
const patchOp = fc.record(
  {
    op: fc.oneof(fc.constantFrom('add', 'Add', 'replace', 'Replace', 'remove', 'Remove'), fc.string({ maxLength: 6 })),
    path: fc.oneof(
      fc.constantFrom(
        'active',
        'members',
        'emails[type eq "work"].value',
        'name.givenName',
        'members[value eq "x"]',
        'displayName',
        'userName',
      ),
      fc.string({ maxLength: 20 }),
    ),
    value: fc.oneof(json, fc.constantFrom('False', 'True', [{ value: 'nope' }], { active: 'False' })),
  },
  { requiredKeys: [] },
);
const patchBody = fc.record(
  {
    schemas: fc.oneof(fc.constant(['urn:ietf:params:scim:api:messages:2.0:PatchOp']), json),
    Operations: fc.oneof(fc.array(patchOp, { maxLength: 4 }), json),
  },
  { requiredKeys: [] },
);
const resourceBody = fc.oneof(
  json,
  fc.record(
    {
      userName: fc.oneof(fc.emailAddress(), fc.string({ maxLength: 20 }), json),
      displayName: fc.oneof(fc.string({ maxLength: 20 }), json),
      active: fc.oneof(fc.boolean(), fc.constantFrom('False', 'yes'), json),
      emails: fc.oneof(fc.array(fc.record({ value: fc.oneof(fc.emailAddress(), json), primary: fc.oneof(fc.boolean(), json) })), json),
      members: fc.oneof(fc.array(fc.record({ value: fc.oneof(fc.string({ maxLength: 40 }), json) })), json),
      name: fc.oneof(fc.record({ givenName: fc.oneof(fc.string({ maxLength: 10 }), json) }), json),
    },
    { requiredKeys: [] },
  ),
);

it('any filter, paging and projection query answers below 500 in the SCIM error schema', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('Users', 'Groups'),
      filter,
      fc.oneof(fc.constant(undefined), fc.string({ maxLength: 5 }), fc.integer().map(String)),
      fc.oneof(fc.constant(undefined), fc.string({ maxLength: 30 })),
      async (resource, f, startIndex, attributes) => {
        const query = new URLSearchParams({ filter: f });
        if (startIndex !== undefined) query.set('startIndex', startIndex);
        if (attributes !== undefined) query.set('attributes', attributes);
        expectScimAnswer(await request(t.app).get(`/scim/v2/${resource}?${query}`).set('Authorization', `Bearer ${token}`));
      },
    ),
    { numRuns: RUNS, seed: SEED },
  );
});

it('any body sent to create, replace or patch answers below 500 in the SCIM error schema', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('post Users', 'put Users', 'patch Users', 'post Groups', 'put Groups', 'patch Groups'),
      resourceBody,
      patchBody,
      async (what, resource, patch) => {
        const [method, type] = what.split(' ') as ['post' | 'put' | 'patch', 'Users' | 'Groups'];
        const id = type === 'Users' ? userId : groupId;
        const path = method === 'post' ? `/scim/v2/${type}` : `/scim/v2/${type}/${id}`;
        const agent = request(t.app);
        const call = method === 'post' ? agent.post(path) : method === 'put' ? agent.put(path) : agent.patch(path);
        const res = await call
          .set('Authorization', `Bearer ${token}`)
          .set('Content-Type', 'application/scim+json')
          .send(JSON.stringify(method === 'patch' ? patch : resource));
        expectScimAnswer(res);
      },
    ),
    { numRuns: RUNS, seed: SEED },
  );
});
