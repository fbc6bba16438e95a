#!/usr/bin/env node
// Turns another system's user export into the rows of POST /api/admin/users/import (docs/migrating.md).
//   node examples/migrate/to-import.mjs auth0 users.ndjson > import.json
//   node examples/migrate/to-import.mjs firebase users.json --signer-key K --salt-separator S --rounds 8 --mem-cost 14 > import.json
//   node examples/migrate/to-import.mjs django auth-users.json > import.json
//   node examples/migrate/to-import.mjs keycloak realm-export.json > import.json
// Then: curl -X POST "$BASE_URL/api/admin/users/import?dry_run=true" -H "Authorization: Bearer $ADMIN_TOKEN" \
//         -H 'Content-Type: application/json' --data @import.json   (and again without dry_run)
import fs from 'node:fs';

const [source, file, ...rest] = process.argv.slice(2);
const option = (name) => {
  const i = rest.indexOf(`--${name}`);
  return i >= 0 ? rest[i + 1] : undefined;
};
const text = () => fs.readFileSync(file, 'utf8');

/** Auth0: the bulk export (NDJSON) joined with the password hashes Auth0 support exports (bcrypt $2b$). */
function auth0() {
  return text()
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line))
    .map((u) => ({
      email: u.email,
      first_name: u.given_name || u.email.split('@')[0],
      last_name: u.family_name || '-',
      email_verified: u.email_verified === true,
      ...(u.passwordHash ? { password_hash: u.passwordHash } : {}),
    }));
}

/** Firebase: `firebase auth:export users.json --format=json` and the project's password hash parameters. */
function firebase() {
  const hashConfig = {
    algorithm: 'SCRYPT',
    base64_signer_key: option('signer-key'),
    base64_salt_separator: option('salt-separator') ?? '',
    rounds: Number(option('rounds') ?? 8),
    mem_cost: Number(option('mem-cost') ?? 14),
  };
  if (!hashConfig.base64_signer_key) throw new Error('--signer-key is required (Firebase console: Users, "Password hash parameters")');
  return JSON.parse(text()).users.map((u) => {
    const [first, ...last] = (u.displayName || u.email.split('@')[0]).split(' ');
    return {
      email: u.email,
      first_name: first,
      last_name: last.join(' ') || '-',
      email_verified: u.emailVerified === true,
      ...(u.passwordHash ? { password_hash: u.passwordHash, password_salt: u.salt, hash_config: hashConfig } : {}),
    };
  });
}

/** Django: `python manage.py dumpdata auth.user --output auth-users.json` (pbkdf2_sha256$… passwords kept as they are). */
function django() {
  return JSON.parse(text())
    .filter((o) => o.model === 'auth.user' && o.fields.email)
    .map(({ fields: f }) => ({
      email: f.email,
      first_name: f.first_name || f.username,
      last_name: f.last_name || '-',
      email_verified: true,
      // An unusable password ("!…") is left out: the person signs in by email or resets it.
      ...(f.password && !f.password.startsWith('!') ? { password_hash: f.password } : {}),
    }));
}

/** Keycloak: a realm export (`kc.sh export --realm R --file realm-export.json`) with its PBKDF2 credentials. */
function keycloak() {
  return JSON.parse(text()).users.map((u) => {
    const credential = (u.credentials ?? []).find((c) => c.type === 'password');
    let password_hash;
    if (credential) {
      const secret = JSON.parse(credential.secretData);
      const data = JSON.parse(credential.credentialData);
      // "pbkdf2" is HMAC-SHA1, "pbkdf2-sha256" and "pbkdf2-sha512" as named.
      const digest = data.algorithm === 'pbkdf2' ? 'sha1' : data.algorithm.replace('pbkdf2-', '');
      password_hash = `$pbkdf2-${digest}$i=${data.hashIterations}$${secret.salt}$${secret.value}`;
    }
    return {
      email: u.email,
      first_name: u.firstName || u.username,
      last_name: u.lastName || '-',
      email_verified: u.emailVerified === true,
      ...(password_hash ? { password_hash } : {}),
    };
  });
}

const converters = { auth0, firebase, django, keycloak };
if (!converters[source] || !file) {
  process.stderr.write('usage: to-import.mjs auth0|firebase|django|keycloak <export file> [firebase options]\n');
  process.exit(2);
}
process.stdout.write(`${JSON.stringify(converters[source](), null, 2)}\n`);
