import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config';
import { thrownMessage } from '../lib/thrown';
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_LENGTH } from '../lib/password';
import { migrateLatest } from '../db';
import { ensureSuperAdmin } from '../services/bootstrap.service';
import { anyFactorRemoved, describeRemovedFactors } from '../services/mfa/factor-reset.service';
import { closeServiceContext, createServiceContext } from '../create-context';
import { rotateSamlKey } from '../services/saml/saml-keys.service';
import { rotateSigningKey } from '../services/oidc/signing-keys.service';
import type { ServiceContext } from '../services/context';
import { withDatabase } from './with-database';

const USAGE = [
  'Usage: npm run admin -- create-admin --email <email> --password <password>',
  '       npm run admin -- rotate-signing-key',
  '       npm run admin -- rotate-saml-key',
].join('\n');

/** Runs `command` with a service context on the migrated database (the embedded one when DATABASE_URL is unset). */
async function withMigratedContext(command: (ctx: ServiceContext) => Promise<void>): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  await withDatabase(config, async (config) => {
    const ctx = createServiceContext(config);
    try {
      await migrateLatest(ctx.db);
      await command(ctx);
    } finally {
      await closeServiceContext(ctx);
    }
  });
}

/**
 * `npm run admin -- rotate-signing-key` (CONTRACT §9): a new current id_token signing key of ID_TOKEN_ALG; the old
 * ones stay in the JWKS until the id_tokens they signed have expired. Running servers switch within 30 seconds.
 */
async function rotateSigningKeyCommand(ctx: ServiceContext): Promise<void> {
  const { kid, alg, retired } = await rotateSigningKey(ctx);
  process.stdout.write(`New current signing key ${kid} (${alg}); retired: ${retired.length ? retired.join(', ') : 'none'}\n`);
}

/**
 * `npm run admin -- rotate-saml-key` (CONTRACT §19): a new SAML signing key and certificate; the old certificate stays
 * in /saml/metadata for 30 days so SPs that refresh the metadata pick up the new one first. Servers switch within 30 s.
 */
async function rotateSamlKeyCommand(ctx: ServiceContext): Promise<void> {
  const { id, retired } = await rotateSamlKey(ctx);
  process.stdout.write(
    `New current SAML signing key ${id}; retired (still published for 30 days): ${retired.length ? retired.join(', ') : 'none'}\n`,
  );
}

/**
 * `npm run admin -- create-admin --email E --password P`: creates a verified super_admin, or promotes the existing
 * account with that email (and sets the given password).
 */
async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { email: { type: 'string' }, password: { type: 'string' } },
  });
  if (positionals[0] === 'rotate-signing-key') return withMigratedContext(rotateSigningKeyCommand);
  if (positionals[0] === 'rotate-saml-key') return withMigratedContext(rotateSamlKeyCommand);
  if (positionals[0] !== 'create-admin' || !values.email || !values.password) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(values.email)) throw new Error('--email is not a valid email address');
  if ([...values.password].length < PASSWORD_MIN_LENGTH || Buffer.byteLength(values.password, 'utf8') > PASSWORD_MAX_BYTES) {
    throw new Error('--password must be 6 characters to 72 bytes');
  }
  const { email, password } = values;
  await withMigratedContext(async (ctx) => {
    // The stored settings (the password policy) apply to the password given here.
    await ctx.settings.refresh();
    const result = await ensureSuperAdmin(ctx, { email, password, resetPassword: true });
    process.stdout.write(`${result.created ? 'Created' : 'Promoted'} super_admin ${email.trim().toLowerCase()} (${result.userId})\n`);
    if (!result.created) {
      // CONTRACT §11: say what taking the account over removed.
      const removed = result.removedFactors;
      process.stdout.write(
        removed && anyFactorRemoved(removed)
          ? `Removed ${describeRemovedFactors(removed)}; the address was notified by mail.\n`
          : 'The account had no second factors.\n',
      );
      process.stdout.write('Every session of the account was signed out.\n');
    }
  });
}

main().catch((err) => {
  process.stderr.write(`${err instanceof ConfigError ? 'Configuration error' : 'Error'}: ${thrownMessage(err)}\n`);
  process.exit(1);
});
