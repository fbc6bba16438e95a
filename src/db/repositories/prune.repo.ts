import type { DbOrTrx } from '..';

export interface PruneCutoffs {
  now: Date;
  /** Revoked sessions are kept this long (refresh-token reuse still finds them), then deleted. */
  revokedBefore: Date;
  /** Login-failure counters idle since before this (and not locked) are deleted. */
  idleBefore: Date;
  /** Dynamically registered clients not used since before this are deleted (CONTRACT §13 abuse limit). */
  unusedClientBefore: Date;
  /** SAML requests that expired before this can no longer be replayed (see saml_requests below). */
  samlRequestsBefore: Date;
}

/**
 * What "expired" means per table, each condition served by the expiry index of the create_schema migration
 * (CONTRACT §3: pruned in small batches on an index over their expiry). A closed list of constant SQL.
 */
/** The common case: a row whose `expires_at` has passed, found by its key. */
const expired = <K extends string>(key: K) => ({ key, where: 'expires_at <= :now' }) as const;

const TARGETS = {
  sessions: {
    key: 'id',
    where: 'expires_at <= :now or revoked_at <= :revokedBefore',
  },
  refresh_tokens: expired('id'),
  oauth_codes: expired('code_hash'),
  oauth_authorization_requests: expired('id'),
  email_tokens: expired('token_hash'),
  email_sign_in_requests: expired('id'),
  login_tokens: expired('token_hash'),
  mfa_tokens: expired('token_hash'),
  webauthn_challenges: expired('challenge'),
  idp_flows: expired('state_hash'),
  idp_pending_links: expired('token_hash'),
  // RFC 8628: a device code past its 10 minutes, whatever its state (its tokens, if any, live in their session).
  oauth_device_codes: expired('device_code_hash'),
  // Wrong user codes are counted in one-minute windows: an idle window is no longer counted.
  device_code_failures: { key: 'session_id', where: 'window_start < :idleBefore' },
  // CONTRACT §13: an initial access token past its expiry can register nothing.
  registration_tokens: expired('id'),
  // CONTRACT §13: a dynamically registered client no token was issued to for 30 days (never, or not since) is deleted
  // with its sessions, codes and grants (foreign keys), so a burst of registrations cannot grow the table for ever. The
  // partial expression index of the add_dynamic_client_registration migration serves the scan. A metadata-document
  // client likewise (its row is written by an unauthenticated authorization request), unless an admin deactivated it:
  // the next request would write it afresh, active (index of add_metadata_document_client_expiry_index).
  oauth_clients: {
    key: 'client_id',
    where:
      "(registration = 'dynamic' and coalesce(last_used_at, created_at) <= :unusedClientBefore) or " +
      "(registration = 'metadata_document' and is_active and coalesce(last_used_at, created_at) <= :unusedClientBefore)",
  },
  // Issue 34: spent assertion and DPoP proof identifiers, kept until they could no longer be accepted anyway.
  oauth_used_jtis: expired('key'),
  // Issue 34: a pushed authorization request lives 60 seconds, used or not.
  oauth_pushed_requests: expired('request_uri_hash'),
  // CONTRACT §19: a pending SAML request (served by saml_requests_expires_at_idx). Its row is also what refuses a
  // replayed AuthnRequest ID; a request's IssueInstant is accepted within 5 minutes either side of now and its row
  // lives 10 minutes, so once expired no copy can pass the IssueInstant check. It goes 5 minutes later still.
  saml_requests: { key: 'id', where: 'expires_at <= :samlRequestsBefore' },
  login_failures: {
    key: 'email',
    where: 'updated_at < :idleBefore and (locked_until is null or locked_until <= :now)',
  },
} as const;

export type PruneTable = keyof typeof TARGETS;

export const PRUNE_TABLES = Object.keys(TARGETS).filter((table): table is PruneTable => Object.hasOwn(TARGETS, table));

/**
 * Deletes at most `limit` expired rows of one table in one short statement (a bounded batch keeps locks and
 * WAL small); returns how many went. Deleting a session cascades to its refresh tokens.
 */
export async function deleteExpiredBatch(db: DbOrTrx, table: PruneTable, cutoffs: PruneCutoffs, limit: number): Promise<number> {
  const { key, where } = TARGETS[table];
  const result = await db.raw(
    `delete from ${table} where ${key} in (select ${key} from ${table} where ${where} limit :limit) returning ${key}`,
    {
      now: cutoffs.now,
      revokedBefore: cutoffs.revokedBefore,
      idleBefore: cutoffs.idleBefore,
      unusedClientBefore: cutoffs.unusedClientBefore,
      samlRequestsBefore: cutoffs.samlRequestsBefore,
      limit,
    },
  );
  return (result.rows ?? []).length;
}

/** Runs one bounded delete after another until a batch comes back short; returns how many rows went in all. */
export async function deleteInBatches(deleteBatch: () => Promise<number>, batchSize: number): Promise<number> {
  let total = 0;
  let deleted: number;
  do {
    deleted = await deleteBatch();
    total += deleted;
  } while (deleted >= batchSize);
  return total;
}
