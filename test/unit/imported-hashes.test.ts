import { hash } from '@node-rs/argon2';
import { firebaseScryptHash, importedHashProblem, schemeOf, verifyImportedHash } from '../../src/lib/imported-hashes';

/**
 * Test vectors published by each source system or standard (docs/passwords.md names them): the right password verifies,
 * a wrong one does not.
 */
const hex64 = (hex: string) => Buffer.from(hex.replace(/\s/g, ''), 'hex').toString('base64');

const VECTORS: Array<[string, string, string, string]> = [
  // [source, stored, right password, scheme]
  // OpenBSD bcrypt test vectors (as in John the Ripper and every bcrypt library's tests): $2a$ and the same as $2b$/$2y$.
  ['bcrypt $2a$ (Openwall vector)', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW', 'U*U', 'bcrypt'],
  ['bcrypt $2y$ (PHP, Laravel)', '$2y$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW', 'U*U', 'bcrypt'],
  ['bcrypt $2b$ (Auth0 export)', '$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW', 'U*U', 'bcrypt'],
  // The argon2 reference implementation's README: `echo -n "password" | ./argon2 somesalt -t 2 -m 16 -p 4 -l 24`.
  ['argon2i (reference README)', '$argon2i$v=19$m=65536,t=2,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG', 'password', 'argon2'],
  // Django's own test (tests/auth_tests/test_hashers.py, Django 1.5 iterations): make_password("lètmein", "seasalt").
  ['Django pbkdf2_sha256', 'pbkdf2_sha256$10000$seasalt$CWWFdHOWwPnki7HvkcqN9iA2T3KLW1cf2uZ5kvArtVY=', 'lètmein', 'pbkdf2'],
  // RFC 6070 PBKDF2-HMAC-SHA1 (P "password", S "salt", c 4096, dkLen 20), in PHC form (Keycloak's older default).
  [
    'PBKDF2-SHA1 (RFC 6070)',
    `$pbkdf2-sha1$i=4096$${Buffer.from('salt').toString('base64')}$${hex64('4b007901b765489abead49d926f721d065a429c1')}`,
    'password',
    'pbkdf2',
  ],
  // RFC 7914 §11 PBKDF2-HMAC-SHA256 (P "passwd", S "salt", c 1, dkLen 64), in PHC form (Keycloak pbkdf2-sha256).
  [
    'PBKDF2-SHA256 (RFC 7914)',
    `$pbkdf2-sha256$i=1$${Buffer.from('salt').toString('base64')}$${hex64(
      '55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783',
    )}`,
    'passwd',
    'pbkdf2',
  ],
  // RFC 7914 §12 scrypt (P "password", S "NaCl", N 1024, r 8, p 16, dkLen 64), in PHC form.
  [
    'scrypt (RFC 7914)',
    `$scrypt$ln=10,r=8,p=16$${Buffer.from('NaCl').toString('base64')}$${hex64(
      'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640',
    )}`,
    'password',
    'scrypt',
  ],
  // Firebase's published example (github.com/firebase/scrypt README): signer key, separator "Bw==", rounds 8, mem 14.
  [
    'Firebase scrypt (firebase/scrypt README)',
    firebaseScryptHash({
      passwordHash: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
      salt: '42xEC+ixf3L2lw==',
      signerKey: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
      saltSeparator: 'Bw==',
      rounds: 8,
      memCost: 14,
    }),
    'user1password',
    'firebase-scrypt',
  ],
];

test.each(VECTORS)('%s: the right password verifies, a wrong one does not', async (_source, stored, password, scheme) => {
  expect(importedHashProblem(stored)).toBeUndefined();
  expect(schemeOf(stored)).toBe(scheme);
  expect(await verifyImportedHash(password, stored)).toBe(true);
  expect(await verifyImportedHash(`${password}x`, stored)).toBe(false);
});

test('argon2id verifies (a hash made by the same library with a known salt and parameters)', async () => {
  const stored = await hash('correct horse', {
    algorithm: 2 /* Algorithm.Argon2id (a const enum) */,
    memoryCost: 4096,
    timeCost: 2,
    parallelism: 1,
  });
  expect(stored).toMatch(/^\$argon2id\$v=19\$m=4096,t=2,p=1\$/);
  expect(schemeOf(stored)).toBe('argon2');
  expect(await verifyImportedHash('correct horse', stored)).toBe(true);
  expect(await verifyImportedHash('correct horsf', stored)).toBe(false);
});

test.each([
  ['md5 hex', '5f4dcc3b5aa765d61d8327deb882cf99', /unknown hash format/],
  ['argon2d', '$argon2d$v=19$m=65536,t=2,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub', /argon2d is not supported/],
  ['scrypt too costly', `$scrypt$ln=30,r=8,p=1$c2FsdA$${'A'.repeat(43)}`, /out of range/],
  ['PBKDF2 without a hash', 'pbkdf2_sha256$1000$salt$', /unknown hash format|PBKDF2/],
  ['PBKDF2 too many iterations', `pbkdf2_sha256$99999999$salt$${'A'.repeat(44)}`, /iterations/],
])('%s is refused with a reason', (_name, stored, reason) => {
  expect(importedHashProblem(stored)).toMatch(reason);
});
