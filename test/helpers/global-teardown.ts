import knexFactory from 'knex';

export default async function globalTeardown(): Promise<void> {
  const template = process.env.SSO_TEST_TEMPLATE_DB;
  if (template && process.env.DATABASE_URL) {
    const admin = knexFactory({ client: 'pg', connection: process.env.DATABASE_URL, pool: { min: 0, max: 1 } });
    await admin.raw(`drop database if exists ${template}`).catch(() => undefined);
    await admin.destroy();
  }
  const pg = (globalThis as Record<string, unknown>).__EMBEDDED_PG__ as { stop(): Promise<void> } | undefined;
  if (pg) await pg.stop();
}
