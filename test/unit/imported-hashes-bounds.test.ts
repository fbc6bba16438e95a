import { firebaseScryptHash, importedHashProblem, verifyImportedHash } from '../../src/lib/imported-hashes';

/**
 * Security review (docs/security.md, "Fifth review"): an imported hash is verified at every sign-in attempt of its
 * account, by anyone who knows the address, in the thread pool that also runs bcrypt, scrypt and DNS for everyone. So
 * a hash whose parameters make one verification cost seconds or gigabytes is refused at import, and one that
 * node:crypto would refuse (a 5xx at sign-in) is refused too.
 */
const salt = Buffer.from('saltsaltsaltsalt').toString('base64').replace(/=+$/, '');
const h32 = Buffer.alloc(32, 7).toString('base64').replace(/=+$/, '');

describe('parameters that make one sign-in cost seconds or gigabytes are refused at import', () => {
  test.each([
    // argon2: each of these takes seconds to minutes (m=1 GiB took 12 s; t grows linearly without an end).
    ['argon2id t=100000', `$argon2id$v=19$m=19456,t=100000,p=1$${salt}$${h32}`],
    ['argon2id m=4 GiB', `$argon2id$v=19$m=4194304,t=1,p=1$${salt}$${h32}`],
    ['argon2id m=1 GiB, t=3', `$argon2id$v=19$m=1048576,t=3,p=1$${salt}$${h32}`],
    ['argon2i p=255', `$argon2i$v=19$m=65536,t=2,p=255$${salt}$${h32}`],
    // bcrypt cost 31: 2^31 rounds, days of CPU (cost 15 took 3.3 s).
    ['bcrypt cost 31', '$2b$31$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'],
    ['bcrypt cost 20', '$2a$20$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'],
    // scrypt within the old per-parameter limits: ln 17, r 8, p 16 took 23 s.
    ['scrypt ln=17 r=8 p=16', `$scrypt$ln=17,r=8,p=16$${salt}$${h32}`],
    // PBKDF2: the derived length multiplies the iterations (3 KB of "hash" with SHA-1 = 150 blocks x 10M iterations).
    ['PBKDF2-SHA1 3 KB hash', `$pbkdf2-sha1$i=10000000$${salt}$${Buffer.alloc(3000, 1).toString('base64')}`],
    ['Django PBKDF2 9.9M iterations', `pbkdf2_sha256$9900000$salt$${Buffer.alloc(32, 1).toString('base64')}`],
    ['PBKDF2-SHA512 9M iterations', `$pbkdf2-sha512$i=9000000$${salt}$${Buffer.alloc(64, 1).toString('base64')}`],
  ])('%s', (_name, stored) => {
    expect(importedHashProblem(stored)).toBeDefined();
  });
});

describe('parameters node:crypto refuses are refused at import, not answered with a 5xx at sign-in', () => {
  test.each([
    // RFC 7914: N < 2^(128 r / 8); OpenSSL refuses these (ERR_CRYPTO_INVALID_SCRYPT_PARAMS).
    ['scrypt ln=20 r=1', `$scrypt$ln=20,r=1,p=1$${salt}$${h32}`],
    // 128 * r * N above the 256 MiB limit.
    ['scrypt ln=20 r=32', `$scrypt$ln=20,r=32,p=1$${salt}$${h32}`],
    [
      'Firebase rounds 32, mem_cost 20',
      firebaseScryptHash({ passwordHash: h32, salt, signerKey: h32, saltSeparator: 'Bw==', rounds: 32, memCost: 20 }),
    ],
  ])('%s', async (_name, stored) => {
    expect(importedHashProblem(stored)).toBeDefined();
    // And verifying such a stored value (a row written before this check) is a plain "no", never a throw.
    await expect(verifyImportedHash('password', stored)).resolves.toBe(false);
  });
});

describe('what the source systems write by default still imports', () => {
  test.each([
    ['bcrypt cost 12 (Devise)', '$2a$12$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'],
    ['argon2id OWASP (m=19456, t=2)', `$argon2id$v=19$m=19456,t=2,p=1$${salt}$${h32}`],
    ['argon2id Keycloak (m=7168, t=5)', `$argon2id$v=19$m=7168,t=5,p=1$${salt}$${h32}`],
    ['argon2id RFC 9106 second choice (m=64 MiB, t=3, p=4)', `$argon2id$v=19$m=65536,t=3,p=4$${salt}$${h32}`],
    ['scrypt passlib (ln=16, r=8, p=1)', `$scrypt$ln=16,r=8,p=1$${salt}$${h32}`],
    ['Django 5 PBKDF2 (1,200,000)', `pbkdf2_sha256$1200000$salt$${Buffer.alloc(32, 1).toString('base64')}`],
    ['Keycloak PBKDF2-SHA256 (27,500, 512-bit key)', `$pbkdf2-sha256$i=27500$${salt}$${Buffer.alloc(64, 1).toString('base64')}`],
    ['Keycloak PBKDF2-SHA512 (210,000)', `$pbkdf2-sha512$i=210000$${salt}$${Buffer.alloc(64, 1).toString('base64')}`],
    [
      'Firebase defaults (rounds 8, mem_cost 14)',
      firebaseScryptHash({ passwordHash: h32, salt, signerKey: h32, saltSeparator: 'Bw==', rounds: 8, memCost: 14 }),
    ],
  ])('%s', (_name, stored) => {
    expect(importedHashProblem(stored)).toBeUndefined();
  });
});
