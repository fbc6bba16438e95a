import { execFileSync } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { makeSignedInUser } from '../helpers/factories';
import { ROOT } from '../helpers/processes';
import { createTestApp, type TestApp } from '../helpers/test-app';

/** docs/migrating.md: each example export, converted by examples/migrate/to-import.mjs, imports and signs in. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const FIREBASE = [
  '--signer-key',
  'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
  '--salt-separator',
  'Bw==',
];

test.each([
  ['auth0', 'auth0-users.ndjson', [], 'ada@auth0.example', 'U*U'],
  ['firebase', 'firebase-users.json', FIREBASE, 'grace@firebase.example', 'user1password'],
  ['django', 'django-users.json', [], 'alan@django.example', 'lètmein'],
  ['keycloak', 'keycloak-realm-export.json', [], 'edsger@keycloak.example', 'password'],
])(
  '%s: converted, imported, signs in with the original password',
  async (source, file, extra, email, password) => {
    const dir = path.join(ROOT, 'examples', 'migrate');
    const rows = JSON.parse(
      execFileSync(process.execPath, [path.join(dir, 'to-import.mjs'), source, path.join(dir, file), ...extra], { encoding: 'utf8' }),
    );
    const admin = (await makeSignedInUser(t, ['super_admin'])).bearer;
    const res = await request(t.app).post('/api/admin/users/import').set('Authorization', admin).send(rows);
    expect(res.status).toBe(201);
    expect((await request(t.app).post('/api/auth/login').send({ email, password })).status).toBe(200);
  },
  90_000,
);
