import { randomUUID } from 'node:crypto';
import { withTransaction, type DbOrTrx } from '../../db';
import {
  deleteSamlKeysRetiredBefore,
  findCurrentSamlKey,
  insertSamlKeyIfNoneCurrent,
  listPublishedSamlKeys,
  retireCurrentSamlKeys,
  type SamlKeyRow,
} from '../../db/repositories/saml-keys.repo';
import { addSeconds } from '../../lib/clock';
import { createSelfSignedCertificate } from '../../lib/saml-certificate';
import type { SigningMaterial } from '../../lib/saml-xml';
import type { ServiceContext } from '../context';

/**
 * A retired key's certificate stays in the metadata this long after `rotate-saml-key`, so an SP that refreshes the
 * IdP's metadata on its own schedule (commonly daily) learns the new certificate before the old one disappears.
 */
export const SAML_RETIRED_KEY_PUBLISHED_DAYS = 30;
const CURRENT_KEY_CACHE_SECONDS = 30;

export const samlEntityId = (ctx: ServiceContext) => `${ctx.config.oidcIssuer}/saml/metadata`;
const sealPurpose = (id: string) => `saml-signing-key:${id}`;

// Per sealer (the KEYS_SECRET that opens the key; one per process, shared by every request's context).
const caches = new WeakMap<ServiceContext['sealer'], { key: SigningMaterial & { id: string }; loadedAt: number }>();

function generate(ctx: ServiceContext) {
  const id = randomUUID();
  const { privateKeyPem, certificatePem } = createSelfSignedCertificate(samlEntityId(ctx), ctx.clock.now());
  return { id, certificatePem, privateKeySealed: ctx.sealer.seal(privateKeyPem, sealPurpose(id)) };
}

function open(ctx: ServiceContext, row: SamlKeyRow): SigningMaterial & { id: string } {
  try {
    return { id: row.id, certificatePem: row.certificatePem, privateKeyPem: ctx.sealer.open(row.privateKeySealed, sealPurpose(row.id)) };
  } catch (err) {
    throw new Error(`SAML signing key ${row.id} does not open with this KEYS_SECRET: run npm run admin -- rotate-saml-key`, { cause: err });
  }
}

/** The current signing key, created at first use (server start calls this); instances starting together share one. */
export async function currentSamlKey(ctx: ServiceContext, db: DbOrTrx = ctx.db): Promise<SigningMaterial & { id: string }> {
  const now = ctx.clock.now().getTime();
  const cached = caches.get(ctx.sealer);
  if (cached && now - cached.loadedAt < CURRENT_KEY_CACHE_SECONDS * 1000) return cached.key;
  let row = await findCurrentSamlKey(db);
  if (!row) {
    const fresh = generate(ctx);
    if (await insertSamlKeyIfNoneCurrent(db, { ...fresh, now: ctx.clock.now() }))
      ctx.logger.info({ id: fresh.id }, 'SAML signing key generated');
    row = await findCurrentSamlKey(db);
    if (!row) throw new Error('no current SAML signing key after generation');
  }
  const key = cached?.key.id === row.id ? cached.key : open(ctx, row);
  caches.set(ctx.sealer, { key, loadedAt: now });
  return key;
}

/** The certificates the metadata publishes: the current one first, then those retired recently. */
export async function publishedSamlCertificates(ctx: ServiceContext): Promise<string[]> {
  await currentSamlKey(ctx);
  const since = addSeconds(ctx.clock.now(), -SAML_RETIRED_KEY_PUBLISHED_DAYS * 86400);
  return (await listPublishedSamlKeys(ctx.db, since)).map((k) => k.certificatePem);
}

/**
 * `npm run admin -- rotate-saml-key`: a new current key signs from now on; the old certificate stays published in the
 * metadata for SAML_RETIRED_KEY_PUBLISHED_DAYS, then is deleted by the next rotation.
 */
export async function rotateSamlKey(ctx: ServiceContext): Promise<{ id: string; retired: string[] }> {
  const fresh = generate(ctx);
  const now = ctx.clock.now();
  const retired = await withTransaction(ctx.db, async (trx) => {
    const ids = await retireCurrentSamlKeys(trx, now);
    await insertSamlKeyIfNoneCurrent(trx, { ...fresh, now });
    await deleteSamlKeysRetiredBefore(trx, addSeconds(now, -SAML_RETIRED_KEY_PUBLISHED_DAYS * 86400));
    await ctx.events.record(trx, { type: 'saml.signing_key_rotated', detail: { id: fresh.id, retired: ids } });
    return ids;
  });
  caches.delete(ctx.sealer);
  return { id: fresh.id, retired };
}
