import { MASK, maskCredentialsDeep, maskUrlCredentials } from '../../src/lib/mask-credentials';

/** src/lib/mask-credentials.ts: every credential in a URL shown to an operator is masked, the rest kept (issue 30). */
test.each([
  ['postgres://sso:db-password-123@db.internal:5432/sso', `postgres://${MASK}:${MASK}@db.internal:5432/sso`],
  [
    'postgres://db.internal/sso?user=sso&password=db-password-123&sslmode=require',
    `postgres://db.internal/sso?user=${MASK}&password=${MASK}&sslmode=require`,
  ],
  ['postgresql://sso@db.internal/sso?sslpassword=key-pass', `postgresql://${MASK}@db.internal/sso?sslpassword=${MASK}`],
  ['smtp://mailer:smtp-password-456@smtp.internal:587', `smtp://${MASK}:${MASK}@smtp.internal:587`],
  ['smtps://mailer%40example.com:p%40ss@smtp.example.com', `smtps://${MASK}:${MASK}@smtp.example.com`],
  ['redis://:redis-password@cache:6379/0', `redis://:${MASK}@cache:6379/0`],
  ['redis://default:redis-password@cache:6379', `redis://${MASK}:${MASK}@cache:6379`],
  ['https://sso.example.test', 'https://sso.example.test'],
  ['https://sso.example.test/', 'https://sso.example.test/'],
  ['https://hooks.example.test/in?api_key=abc&x=1', `https://hooks.example.test/in?api_key=${MASK}&x=1`],
  ['not a url', 'not a url'],
  ['', ''],
  ['postgres://user:pa ss@[bad', MASK],
])('%s -> %s', (input, expected) => {
  expect(maskUrlCredentials(input)).toBe(expected);
  for (const secret of ['db-password-123', 'smtp-password-456', 'redis-password', 'mailer', 'key-pass', 'p%40ss', 'abc']) {
    if (input.includes(secret)) expect(maskUrlCredentials(input)).not.toContain(secret);
  }
});

test('inside arrays and objects too', () => {
  expect(maskCredentialsDeep({ a: ['smtp://u:p@h', 'plain'], n: 3 })).toEqual({ a: [`smtp://${MASK}:${MASK}@h`, 'plain'], n: 3 });
});
