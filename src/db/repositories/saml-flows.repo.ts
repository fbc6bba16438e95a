import type { DbOrTrx } from '..';
import { date, hidden, same, type RowOf } from '../rows';
import { table } from '../table';

/** An AuthnRequest (or an IdP-initiated start) waiting for the person to sign in (CONTRACT §19). */
export const samlRequests = table('saml_requests', {
  id: same<string>(),
  appId: same<string>(),
  requestId: same<string | null>(),
  acsUrl: same<string>(),
  relayState: same<string | null>(),
  forceAuthn: same<boolean>(),
  isPassive: same<boolean>(),
  createdAt: date,
  expiresAt: date,
  usedAt: hidden<Date | null>(),
});
export type SamlRequestRow = RowOf<typeof samlRequests.columns>;

/**
 * Stores a request; false when this app already sent this request ID (the unique index (app_id, request_id) decides,
 * so of two concurrent copies of one AuthnRequest exactly one is stored).
 */
export async function insertSamlRequest(db: DbOrTrx, r: Omit<SamlRequestRow, 'createdAt'> & { now: Date }): Promise<boolean> {
  const rows = await db('saml_requests')
    .insert({
      id: r.id,
      app_id: r.appId,
      request_id: r.requestId,
      acs_url: r.acsUrl,
      relay_state: r.relayState,
      force_authn: r.forceAuthn,
      is_passive: r.isPassive,
      created_at: r.now,
      expires_at: r.expiresAt,
    })
    .onConflict(['app_id', 'request_id'])
    .ignore()
    .returning('id');
  return rows.length > 0;
}

/** A live, unused request (to decide what to do next); spending it is `consumeSamlRequest`. */
export const findLiveSamlRequest = (db: DbOrTrx, id: string, now: Date) => samlRequests.findLive(db, { id, used_at: null }, { now });

/** Spends a request with one conditional UPDATE: of concurrent answers to one request exactly one wins. */
export const consumeSamlRequest = (db: DbOrTrx, id: string, now: Date) =>
  samlRequests.spend(db, { id, used_at: null }, { used_at: now }, { now });

/** What an assertion was issued for: SessionIndex -> SSO session. */
export interface SamlSessionRow {
  sessionIndex: string;
  sessionId: string;
  appId: string;
  userId: string;
  nameId: string;
  createdAt: Date;
  endedAt: Date | null;
}

export async function insertSamlSession(db: DbOrTrx, s: Omit<SamlSessionRow, 'endedAt' | 'createdAt'> & { now: Date }): Promise<void> {
  await db('saml_sessions').insert({
    session_index: s.sessionIndex,
    session_id: s.sessionId,
    app_id: s.appId,
    user_id: s.userId,
    name_id: s.nameId,
    created_at: s.now,
  });
}

/**
 * Ends the app's SAML session with this SessionIndex, only when it was issued to this NameID: a LogoutRequest whose
 * NameID does not match ends nothing (one statement, so nothing is ended before the comparison).
 */
export async function endSamlSession(
  db: DbOrTrx,
  appId: string,
  sessionIndex: string,
  nameId: string,
  now: Date,
): Promise<SamlSessionRow | undefined> {
  const [row] = await db('saml_sessions')
    .where({ app_id: appId, session_index: sessionIndex, name_id: nameId })
    .whereNull('ended_at')
    .update({ ended_at: now })
    .returning('*');
  return row
    ? {
        sessionIndex: row.session_index,
        sessionId: row.session_id,
        appId: row.app_id,
        userId: row.user_id,
        nameId: row.name_id,
        createdAt: new Date(row.created_at),
        endedAt: new Date(row.ended_at),
      }
    : undefined;
}

/** The SAML apps a user signed in to (connected apps), with the last sign-in, newest first. */
export async function listSamlAppsOfUser(db: DbOrTrx, userId: string): Promise<Array<{ appId: string; name: string; lastSignInAt: Date }>> {
  const rows = await db('saml_sessions as s')
    .join('saml_apps as a', 'a.id', 's.app_id')
    .where('s.user_id', userId)
    .where('a.enabled', true)
    .groupBy('a.id', 'a.name')
    .select('a.id as app_id', 'a.name', db.raw('max(s.created_at) as last_sign_in_at'))
    .orderBy('last_sign_in_at', 'desc');
  return rows.map((r: { app_id: string; name: string; last_sign_in_at: Date }) => ({
    appId: r.app_id,
    name: r.name,
    lastSignInAt: new Date(r.last_sign_in_at),
  }));
}

/**
 * Ends this app's SAML sessions on one SSO session issued to this NameID (SLO without a known SessionIndex, from the
 * browser's cookie).
 */
export async function endSamlSessionsOfSession(db: DbOrTrx, appId: string, sessionId: string, nameId: string, now: Date): Promise<number> {
  return db('saml_sessions')
    .where({ app_id: appId, session_id: sessionId, name_id: nameId })
    .whereNull('ended_at')
    .update({ ended_at: now });
}
