import { hash as argon2Hash } from '@node-rs/argon2';
import request from 'supertest';
import { makeSignedInUser, uniqueEmail } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Moving users in and out (docs/passwords.md): an imported user of each scheme signs in with the original password and
 * is re-hashed with bcrypt; a malformed import changes nothing and says which rows; a dry run writes nothing; the export
 * is JSON lines without secrets, paged by Link.
 */
let t: TestApp;
let admin: string;
beforeAll(async () => {
  t = await createTestApp();
  admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
});
afterAll(async () => {
  await t.close();
});

const hex64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
const importRows = (rows: unknown, auth = admin, query = '') =>
  request(t.app)
    .post(`/api/admin/users/import${query}`)
    .set('Authorization', auth)
    .send(rows as object);
const login = (email: string, password: string) => request(t.app).post('/api/auth/login').send({ email, password });
const storedHash = async (email: string) => (await t.db('users').where({ email }).first('password_hash'))?.password_hash as string | null;

describe('each scheme signs in with its original password and is re-hashed', () => {
  const cases: Array<{ scheme: string; password: string; row: Record<string, unknown> }> = [];
  beforeAll(async () => {
    const row = (scheme: string, password: string, extra: Record<string, unknown>) =>
      cases.push({
        scheme,
        password,
        row: { email: uniqueEmail(scheme), first_name: 'Imp', last_name: scheme, email_verified: true, ...extra },
      });
    row('bcrypt-auth0', 'U*U', { password_hash: '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW' });
    row('argon2id', 'argon two id', {
      password_hash: await argon2Hash('argon two id', { algorithm: 2, memoryCost: 4096, timeCost: 2, parallelism: 1 }),
    });
    row('argon2i', 'password', { password_hash: '$argon2i$v=19$m=65536,t=2,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG' });
    row('scrypt', 'password', {
      password_hash: `$scrypt$ln=10,r=8,p=16$${Buffer.from('NaCl').toString('base64')}$${hex64(
        'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640',
      )}`,
    });
    row('django', 'lètmein', { password_hash: 'pbkdf2_sha256$10000$seasalt$CWWFdHOWwPnki7HvkcqN9iA2T3KLW1cf2uZ5kvArtVY=' });
    row('keycloak', 'password', {
      password_hash: `$pbkdf2-sha1$i=4096$${Buffer.from('salt').toString('base64')}$${hex64('4b007901b765489abead49d926f721d065a429c1')}`,
    });
    row('firebase', 'user1password', {
      password_hash: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
      password_salt: '42xEC+ixf3L2lw==',
      hash_config: {
        algorithm: 'SCRYPT',
        base64_signer_key: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
        base64_salt_separator: 'Bw==',
        rounds: 8,
        mem_cost: 14,
      },
    });
    const res = await importRows(cases.map((c) => c.row));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ imported: cases.length, dry_run: false });
  });

  test.each(['bcrypt-auth0', 'argon2id', 'argon2i', 'scrypt', 'django', 'keycloak', 'firebase'])('%s', async (scheme) => {
    const { row, password } = cases.find((c) => c.scheme === scheme)!;
    const email = row.email as string;
    expect((await login(email, `${password}-wrong`)).status).toBe(401);
    expect(await storedHash(email)).not.toMatch(/^\$2b\$/);
    const first = await login(email, password);
    expect(first.status).toBe(200);
    expect(first.body.user.email).toBe(email);
    expect(await storedHash(email)).toMatch(/^\$2b\$04\$/);
    expect((await login(email, password)).status).toBe(200);
    const event = await t.db('audit_events').where({ type: 'auth.password.changed', subject_id: first.body.user.id }).first();
    expect(event.detail).toMatchObject({ via: 'rehash' });
  });
});

describe('all or nothing', () => {
  test('one bad row among good ones: 400 naming each problem by row and email, nothing created', async () => {
    const good = uniqueEmail('good');
    const dup = uniqueEmail('dup');
    const rows = [
      { email: good, first_name: 'Good', last_name: 'Row' },
      { email: 'not-an-address', first_name: 'Bad', last_name: 'Email' },
      { email: dup, first_name: 'A', last_name: 'B', password_hash: '5f4dcc3b5aa765d61d8327deb882cf99' },
      { email: dup.toUpperCase(), first_name: 'C', last_name: 'D' },
      { email: uniqueEmail('role'), first_name: 'E', last_name: 'F', roles: ['no-such-role'] },
      { email: uniqueEmail('fb'), first_name: 'G', last_name: 'H', password_hash: 'abc', password_salt: 'def' },
    ];
    const res = await importRows(rows);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    const byRow = res.body.details.map((d: { row: number; email: string; message: string }) => [d.row, d.message]);
    expect(byRow).toEqual(
      expect.arrayContaining([
        [2, expect.stringMatching(/email/i)],
        [3, expect.stringMatching(/unknown hash format/)],
        [4, 'the same address as row 3'],
        [5, 'no global role is named no-such-role'],
        [6, 'a Firebase row needs password_hash, password_salt and hash_config'],
      ]),
    );
    expect(byRow.some(([row]: [number]) => row === 1)).toBe(false);
    expect(await t.db('users').where({ email: good }).first()).toBeUndefined();
  });

  test('an address that already has an account refuses the import', async () => {
    const existing = (await makeSignedInUser(t)).user.email;
    const res = await importRows([{ email: existing, first_name: 'X', last_name: 'Y' }]);
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      { path: 'rows[0].email', row: 1, email: existing, message: 'an account with this address already exists' },
    ]);
  });

  test('more than 10,000 rows: 400 and nothing created', async () => {
    const rows = Array.from({ length: 10_001 }, (_, i) => ({ email: `bulk-${i}@many.test`, first_name: 'B', last_name: 'U' }));
    const res = await importRows(rows);
    expect(res.status).toBe(400);
    expect(res.body.details[0].message).toMatch(/at most 10000 rows/);
    expect(await t.db('users').where({ email: 'bulk-0@many.test' }).first()).toBeUndefined();
  });

  test('a body that is neither JSON rows nor CSV: 400', async () => {
    const res = await request(t.app).post('/api/admin/users/import').set('Authorization', admin).send({ email: 'x' });
    expect(res.status).toBe(400);
  });
});

describe('CSV, roles and dry run', () => {
  test('CSV with a header row and roles separated by ";": a dry run writes nothing (200), the real one creates (201)', async () => {
    const a = uniqueEmail('csv');
    const b = uniqueEmail('csv');
    const csv = `email,first_name,last_name,email_verified,roles,password_hash\n${a},Ann,Csv,true,manager,\n"${b}","Bob, Jr",Csv,false,,pbkdf2_sha256$10000$seasalt$CWWFdHOWwPnki7HvkcqN9iA2T3KLW1cf2uZ5kvArtVY=\n`;
    const dry = await request(t.app).post('/api/admin/users/import?dry_run=true').set('Authorization', admin).type('text/csv').send(csv);
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({ imported: 0, dry_run: true });
    expect(await t.db('users').where({ email: a }).first()).toBeUndefined();
    const real = await request(t.app).post('/api/admin/users/import').set('Authorization', admin).type('text/csv').send(csv);
    expect(real.status).toBe(201);
    expect(real.body.imported).toBe(2);
    const ann = await t.db('users').where({ email: a }).first();
    expect(ann.email_verified).toBe(true);
    expect(ann.password_hash).toBeNull();
    const roles = await t.db('user_roles').join('roles', 'roles.id', 'user_roles.role_id').where({ user_id: ann.id }).pluck('roles.name');
    expect(roles).toEqual(['manager']);
    expect((await t.db('users').where({ email: b }).first()).first_name).toBe('Bob, Jr');
    expect((await login(b, 'lètmein')).status).toBe(200);
  });

  test('a manager (users:write, no users:manage_roles) may import without roles, not with them; no users:write is 403', async () => {
    const manager = (await makeSignedInUser(t, ['manager'])).bearer;
    const withRoles = await importRows([{ email: uniqueEmail('m'), first_name: 'M', last_name: 'R', roles: ['manager'] }], manager);
    expect(withRoles.status).toBe(400);
    expect(withRoles.body.details[0].message).toBe('assigning roles needs the permission users:manage_roles');
    expect((await importRows([{ email: uniqueEmail('m'), first_name: 'M', last_name: 'R' }], manager)).status).toBe(201);
    const nobody = (await makeSignedInUser(t)).bearer;
    expect((await importRows([{ email: uniqueEmail('n'), first_name: 'N', last_name: 'O' }], nobody)).status).toBe(403);
  });
});

describe('export', () => {
  test('JSON lines without secrets, 1,000 a page with Link rel="next"', async () => {
    const rows = Array.from({ length: 1001 }, (_, i) => ({
      email: `page-${i}-${Date.now()}@export.test`,
      first_name: 'P',
      last_name: String(i),
    }));
    expect((await importRows(rows)).status).toBe(201);
    const first = await request(t.app).get('/api/admin/users/export').set('Authorization', admin);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toMatch(/application\/x-ndjson/);
    const lines = first.text.trim().split('\n');
    expect(lines).toHaveLength(1000);
    const account = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(Object.keys(account).sort()).toEqual(
      ['created_at', 'email', 'email_verified', 'first_name', 'id', 'is_active', 'last_login_at', 'last_name', 'roles'].sort(),
    );
    expect(first.text).not.toMatch(/\$2[aby]\$|password|pbkdf2_|\$argon2|\$scrypt\$|\$firebase/);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.link!)![1]!;
    const second = await request(t.app)
      .get(new URL(next).pathname + new URL(next).search)
      .set('Authorization', admin);
    expect(second.status).toBe(200);
    const total = (await t.db('users').count({ n: '*' }))[0]!.n;
    expect(lines.length + second.text.trim().split('\n').length).toBe(Number(total));
    expect(second.headers.link).toBeUndefined();
    expect(
      (
        await request(t.app)
          .get('/api/admin/users/export')
          .set('Authorization', (await makeSignedInUser(t)).bearer)
      ).status,
    ).toBe(403);
  });
});
