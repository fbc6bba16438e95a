import type { Knex } from 'knex';

/**
 * SAML assertion encryption (docs/saml.md): the certificate an SP's metadata gives for encryption when it differs from
 * its signing certificate. Null: the app's sp_certificate serves both (an app created from fields has one).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('saml_apps', (t) => {
    t.text('sp_encryption_certificate').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('saml_apps', (t) => {
    t.dropColumn('sp_encryption_certificate');
  });
}
