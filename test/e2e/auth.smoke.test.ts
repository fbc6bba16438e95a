import request from 'supertest';
import { createTestApp, type TestApp } from '../helpers/test-app';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

test('register then me', async () => {
  const res = await request(t.app)
    .post('/api/auth/register')
    .send({ first_name: 'Ada', last_name: 'Lovelace', email: 'Ada@Example.test', password: 'secret1' });
  expect(res.status).toBe(201);
  expect(res.body.user.email).toBe('ada@example.test');
  const me = await request(t.app).get('/api/auth/me').set('Authorization', `Bearer ${res.body.accessToken}`);
  expect(me.status).toBe(200);
  expect(me.body.user.name).toBe('Ada Lovelace');
});
