import request from 'supertest';
import { makeUser, uniqueEmail } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Security review (docs/security.md, "Fifth review"): sign-in by email tells nobody whether an address has an account.
 * The request answers 202 for every address; the code check must not tell it either: the fifth wrong code of a live
 * request (which exists only for an active account with a verified address) answered another message than the fifth
 * wrong code for an unknown address.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const ask = (email: string) => request(t.app).post('/api/auth/login/email').send({ email });
const verify = (email: string, code: string) => request(t.app).post('/api/auth/login/email/verify').send({ email, code });

test('wrong codes get the same answers for an account that asked and for an unknown address', async () => {
  const user = await makeUser(t);
  const unknown = uniqueEmail('nobody');
  await ask(user.email);
  await ask(unknown);
  const code = /: (\d{6})\n/.exec(t.mails.filter((m) => m.to === user.email).pop()!.text)![1]!;
  const wrong = code === '111111' ? '222222' : '111111';
  for (let i = 1; i <= 6; i++) {
    const [known, nobody] = [await verify(user.email, wrong), await verify(unknown, wrong)];
    expect({ attempt: i, status: known.status, body: known.body }).toEqual({ attempt: i, status: nobody.status, body: nobody.body });
  }
});
