import { withTransaction } from '../../db';
import { findSamlAppByEntityId, type SamlAppRow } from '../../db/repositories/saml-apps.repo';
import { endSamlSession, endSamlSessionsOfSession } from '../../db/repositories/saml-flows.repo';
import { revokeSession } from '../../db/repositories/sessions.repo';
import {
  childrenNS,
  el,
  newDocument,
  NS,
  onlyChild,
  SamlInputError,
  serialize,
  signElement,
  signedRedirectQuery,
  textOf,
} from '../../lib/saml-xml';
import type { ServiceContext } from '../context';
import type { Principal } from '../principal';
import { currentSamlKey, samlEntityId } from './saml-keys.service';
import { idpEndpoints } from './saml-metadata.service';
import {
  checkMessageSignature,
  checkRequestEnvelope,
  issuerOf,
  newSamlId,
  readBindingMessage,
  type SamlMessageInput,
  type SamlOutcome,
} from './saml-sso.service';
import { MAX_RELAY_STATE_BYTES } from './saml-policy';

const instant = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * /saml/slo (CONTRACT §19): a LogoutRequest (signature checked as for AuthnRequests) ends the SSO session its
 * SessionIndex names (or, without one, the browser's own session when the app was signed in on it), and the signed
 * LogoutResponse goes to the app's SLO URL in the binding registered for it. `endedSessionId` tells the route which
 * session ended, to clear the browser's cookies when it was this browser's.
 */
export async function receiveLogoutRequest(
  ctx: ServiceContext,
  input: SamlMessageInput,
  principal: Principal | undefined,
): Promise<{ outcome: SamlOutcome; endedSessionIds: string[] }> {
  let app: SamlAppRow | undefined;
  let issuer: string | undefined;
  try {
    if (input.relayState !== undefined && Buffer.byteLength(input.relayState, 'utf8') > MAX_RELAY_STATE_BYTES) {
      throw new SamlInputError(`RelayState is longer than ${MAX_RELAY_STATE_BYTES} bytes`);
    }
    const { xml, doc } = readBindingMessage(input);
    issuer = issuerOf(doc.documentElement);
    app = await findSamlAppByEntityId(ctx.db, issuer);
    if (!app) throw new SamlInputError('the Issuer is not a registered SAML application');
    if (!app.enabled) throw new SamlInputError('this SAML application is disabled');
    if (!app.sloUrl) throw new SamlInputError('this application has no single logout URL registered');
    const request = checkMessageSignature(app, input, xml, doc, 'SAMLRequest');
    if (issuerOf(request) !== app.entityId) throw new SamlInputError('the signed Issuer differs');
    const { id } = checkRequestEnvelope(ctx, request, 'LogoutRequest', idpEndpoints(ctx).slo_url);
    const nameId = textOf(onlyChild(request, NS.assertion, 'NameID'));
    if (!nameId) throw new SamlInputError('the LogoutRequest has no NameID');
    const sessionIndexes = childrenNS(request, NS.protocol, 'SessionIndex')
      .map((s) => textOf(s))
      .filter((s): s is string => !!s)
      .slice(0, 20);
    const now = ctx.clock.now();
    const target = app;
    const ended = await withTransaction(ctx.db, async (trx) => {
      const sessionIds: string[] = [];
      for (const index of sessionIndexes) {
        const saml = await endSamlSession(trx, target.id, index, nameId, now);
        if (saml) sessionIds.push(saml.sessionId);
      }
      if (sessionIndexes.length === 0 && principal && !principal.clientId) {
        if ((await endSamlSessionsOfSession(trx, target.id, principal.sessionId, nameId, now)) > 0) sessionIds.push(principal.sessionId);
      }
      for (const sessionId of sessionIds) await revokeSession(trx, sessionId, now);
      await ctx.events.record(trx, {
        type: 'saml.slo',
        actorId: null,
        detail: { app_id: target.id, sessions_ended: sessionIds.length },
      });
      return sessionIds;
    });
    const key = await currentSamlKey(ctx);
    const destination = app.sloUrl;
    const docOut = newDocument();
    const responseId = newSamlId();
    const response = el(
      docOut,
      NS.protocol,
      'samlp:LogoutResponse',
      {
        ID: responseId,
        Version: '2.0',
        IssueInstant: instant(now),
        Destination: destination,
        InResponseTo: id,
      },
      [
        el(docOut, NS.assertion, 'saml:Issuer', {}, [samlEntityId(ctx)]),
        el(docOut, NS.protocol, 'samlp:Status', {}, [
          el(docOut, NS.protocol, 'samlp:StatusCode', { Value: 'urn:oasis:names:tc:SAML:2.0:status:Success' }),
        ]),
      ],
    );
    const unsigned = serialize(response);
    if (app.sloBinding === 'HTTP-Redirect') {
      const query = signedRedirectQuery('SAMLResponse', unsigned, input.relayState, key.privateKeyPem);
      return {
        outcome: { kind: 'redirect', url: `${destination}${destination.includes('?') ? '&' : '?'}${query}` },
        endedSessionIds: ended,
      };
    }
    const signed = signElement(unsigned, NS.protocol, 'LogoutResponse', responseId, key);
    return {
      outcome: {
        kind: 'post',
        action: destination,
        field: 'SAMLResponse',
        message: Buffer.from(signed).toString('base64'),
        relayState: input.relayState,
      },
      endedSessionIds: ended,
    };
  } catch (err) {
    if (err instanceof SamlInputError) {
      await ctx.events.record(ctx.db, {
        type: 'saml.slo',
        actorId: null,
        detail: { refused: err.message, ...(app ? { app_id: app.id } : issuer ? { issuer: issuer.slice(0, 200) } : {}) },
      });
      return { outcome: { kind: 'error', detail: err.message }, endedSessionIds: [] };
    }
    throw err;
  }
}
