import type { DbOrTrx } from '../../db';
import { findGrant, upsertGrant } from '../../db/repositories/oauth-grants.repo';
import { widenedGrant, type ConsentAsk, type ConsentedGrant } from './grant-policy';

/**
 * CONTRACT §23: a person's approval (consent page or /device) widens the client's grant by what was shown: its
 * scopes, the API and, where there is one, the redirect URI. One function for both approvals; answers the grant as stored.
 */
export async function recordConsent(trx: DbOrTrx, userId: string, clientId: string, ask: ConsentAsk, now: Date): Promise<ConsentedGrant> {
  const granted = widenedGrant(await findGrant(trx, userId, clientId), ask);
  await upsertGrant(trx, {
    userId,
    clientId,
    scopes: [...granted.scopes],
    resources: [...granted.resources],
    redirectUris: [...granted.redirectUris],
    now,
  });
  return granted;
}
