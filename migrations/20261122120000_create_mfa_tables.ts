import type { Knex } from 'knex';

/**
 * Second factors and passkeys (CONTRACT §10): one TOTP per user (secret sealed with KEYS_SECRET, the last accepted
 * time step for replay refusal across instances), hashed single-use recovery codes, WebAuthn credentials,
 * single-use WebAuthn challenges and the mfa_tokens of the sign-in exchange.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mfa_totp', (t) => {
    t.uuid('user_id').primary().references('users.id').onDelete('CASCADE');
    t.text('secret_sealed').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Null while enrolment is pending (setup done, no code confirmed yet).
    t.timestamp('confirmed_at', { useTz: true });
    t.bigInteger('last_used_step');
  });

  await knex.schema.createTable('mfa_recovery_codes', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('code_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('used_at', { useTz: true });
    t.unique(['user_id', 'code_hash']);
  });

  await knex.schema.createTable('webauthn_credentials', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    // base64url credential ID as the authenticator reports it.
    t.text('credential_id').notNullable().unique();
    t.binary('public_key').notNullable();
    t.bigInteger('counter').notNullable().defaultTo(0);
    t.specificType('transports', 'text[]').notNullable().defaultTo(knex.raw(`'{}'::text[]`));
    t.text('name').notNullable();
    t.boolean('backed_up').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true });
    t.index(['user_id']);
  });

  await knex.schema.createTable('webauthn_challenges', (t) => {
    t.text('challenge').primary();
    // register | login | mfa
    t.text('purpose').notNullable();
    t.uuid('user_id').references('users.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.index(['expires_at']);
  });

  await knex.schema.createTable('mfa_tokens', (t) => {
    t.text('token_hash').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.integer('failures').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['mfa_tokens', 'webauthn_challenges', 'webauthn_credentials', 'mfa_recovery_codes', 'mfa_totp']) {
    await knex.schema.dropTableIfExists(table);
  }
}
