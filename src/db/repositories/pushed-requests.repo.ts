import type { DbOrTrx } from '..';
import { authorizationRequestParams, type AuthorizationRequestParams } from '../../declarations/authorization-request';
import { jsonColumnValue } from '../../lib/json-text';
import { live } from '../table';

/** A pushed authorization request (RFC 9126, issue 34): the parameters the client pushed, as strings. */
export interface PushedRequestRow {
  clientId: string;
  /** Read back through the declared schema; null when the stored row does not parse (it is refused, never judged). */
  params: AuthorizationRequestParams | null;
  expiresAt: Date;
  usedAt: Date | null;
}

export interface PushedRequestRecord {
  request_uri_hash: string;
  client_id: string;
  /** jsonb: parsed by pg (its text from drivers that do not parse json). */
  params: unknown;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export async function insertPushedRequest(
  db: DbOrTrx,
  r: { requestUriHash: string; clientId: string; params: AuthorizationRequestParams; now: Date; expiresAt: Date },
): Promise<void> {
  await db('oauth_pushed_requests').insert({
    request_uri_hash: r.requestUriHash,
    client_id: r.clientId,
    params: JSON.stringify(r.params),
    created_at: r.now,
    expires_at: r.expiresAt,
  });
}

export async function findPushedRequest(db: DbOrTrx, requestUriHash: string): Promise<PushedRequestRow | undefined> {
  const row: PushedRequestRecord | undefined = await db('oauth_pushed_requests').where({ request_uri_hash: requestUriHash }).first();
  if (!row) return undefined;
  const params = authorizationRequestParams.safeParse(jsonColumnValue(row.params));
  return {
    clientId: row.client_id,
    params: params.success ? params.data : null,
    expiresAt: new Date(row.expires_at),
    usedAt: row.used_at ? new Date(row.used_at) : null,
  };
}

/** Marks the request used; true for exactly one caller, and only while it is unused and unexpired. */
export async function usePushedRequest(db: DbOrTrx, requestUriHash: string, now: Date): Promise<boolean> {
  const updated = await db('oauth_pushed_requests')
    .where({ request_uri_hash: requestUriHash, used_at: null })
    .modify(live({ now }))
    .update({ used_at: now });
  return updated === 1;
}
