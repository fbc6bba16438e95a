import { createHmac, randomBytes } from 'node:crypto';
import { withTransaction } from '../../db';
import { findSamlAppByEntityId, findSamlAppById, type SamlAppRow } from '../../db/repositories/saml-apps.repo';
import {
  consumeSamlRequest,
  findLiveSamlRequest,
  insertSamlRequest,
  insertSamlSession,
  type SamlRequestRow,
} from '../../db/repositories/saml-flows.repo';
import { findSessionById } from '../../db/repositories/sessions.repo';
import { addSeconds } from '../../lib/clock';
import {
  attr,
  BINDING,
  decodeBase64,
  el,
  encryptToCertificate,
  inflateFromRedirect,
  newDocument,
  NS,
  onlyChild,
  parseSamlXml,
  SamlInputError,
  serialize,
  signElement,
  textOf,
  verifyRedirectSignature,
  verifySignedRoot,
  type SigningMaterial,
} from '../../lib/saml-xml';
import type { ServiceContext } from '../context';
import { enrolUrlFor, needsSecondFactorForAdmin } from '../mfa/policy';
import type { Principal } from '../principal';
import { currentSamlKey, samlEntityId } from './saml-keys.service';
import { idpEndpoints } from './saml-metadata.service';
import { MAX_RELAY_STATE_BYTES, NAME_ID_FORMAT_URN, SAML_REQUEST_TTL_SECONDS, SAML_WINDOW_SECONDS } from './saml-policy';

/** What a SAML endpoint answers: an HTML error page (400), a redirect, or the auto-submitting POST form. */
export type SamlOutcome =
  | { kind: 'error'; detail: string }
  | { kind: 'redirect'; url: string }
  | { kind: 'post'; action: string; field: 'SAMLResponse' | 'SAMLRequest'; message: string; relayState?: string; appName?: string };

/** A received message as the binding delivered it. */
export interface SamlMessageInput {
  binding: 'redirect' | 'post';
  message: string | undefined;
  relayState: string | undefined;
  /** The query string as sent (Redirect binding: its signature covers these bytes). */
  rawQuery: string;
}

const STATUS = {
  success: 'urn:oasis:names:tc:SAML:2.0:status:Success',
  requester: 'urn:oasis:names:tc:SAML:2.0:status:Requester',
  noPassive: 'urn:oasis:names:tc:SAML:2.0:status:NoPassive',
} as const;

const SAML_ID = /^[A-Za-z_][\w.-]{0,255}$/;

/** A fresh SAML ID (an xsd:ID: starts with a letter or underscore). */
export const newSamlId = () => `_${randomBytes(20).toString('hex')}`;
const instant = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The message of a binding, decoded and parsed under the one parser configuration. */
export function readBindingMessage(input: SamlMessageInput): { xml: string; doc: Document } {
  if (!input.message) throw new SamlInputError('the request carries no SAML message');
  const xml = input.binding === 'redirect' ? inflateFromRedirect(input.message) : decodeBase64(input.message).toString('utf8');
  return { xml, doc: parseSamlXml(xml) };
}

/**
 * The signature rule of CONTRACT §19 for a message from `app`: checked with the registered certificate when the app has
 * one and the message is signed, required when the app wants signed requests. Returns the element to read the message
 * from (for an enveloped signature, the bytes that were verified).
 */
export function checkMessageSignature(
  app: SamlAppRow,
  input: SamlMessageInput,
  xml: string,
  doc: Document,
  messageParam: 'SAMLRequest' | 'SAMLResponse',
): Element {
  const root = doc.documentElement;
  const signedQuery = input.binding === 'redirect' && /(^|[?&])Signature=/.test(input.rawQuery);
  const signedXml = doc.getElementsByTagNameNS(NS.dsig, 'Signature').length > 0;
  if (app.wantAuthnRequestsSigned && !signedQuery && !signedXml) throw new SamlInputError('this application must sign its requests');
  if (!app.spCertificate) return root;
  if (input.binding === 'redirect' && signedQuery) {
    verifyRedirectSignature(input.rawQuery, messageParam, app.spCertificate);
    // The query signature covers the message; an enveloped one inside a Redirect message is not read.
    return root;
  }
  if (signedXml) return verifySignedRoot(xml, doc, app.spCertificate);
  return root;
}

/** Issuer, ID, version, IssueInstant and Destination of a received request; throws with the reason. */
export function checkRequestEnvelope(ctx: ServiceContext, root: Element, expectedName: string, endpoint: string): { id: string } {
  if (root.namespaceURI !== NS.protocol || root.localName !== expectedName)
    throw new SamlInputError(`the message is not a ${expectedName}`);
  if (attr(root, 'Version') !== '2.0') throw new SamlInputError('the message is not SAML 2.0');
  const id = attr(root, 'ID');
  if (!id || !SAML_ID.test(id)) throw new SamlInputError('the message has no valid ID');
  const issued = Date.parse(attr(root, 'IssueInstant') ?? '');
  const now = ctx.clock.now().getTime();
  if (Number.isNaN(issued)) throw new SamlInputError('the message has no valid IssueInstant');
  if (Math.abs(now - issued) > SAML_WINDOW_SECONDS * 1000) throw new SamlInputError('the message was issued too long ago or in the future');
  const destination = attr(root, 'Destination');
  if (destination !== undefined && destination !== endpoint) throw new SamlInputError('the message is addressed to another Destination');
  return { id };
}

/** The issuer of a request, before its signature is checked (to find the app whose certificate checks it). */
export function issuerOf(root: Element): string {
  const issuer = textOf(onlyChild(root, NS.assertion, 'Issuer'));
  if (!issuer) throw new SamlInputError('the message has no Issuer');
  return issuer;
}

function relayStateProblem(relayState: string | undefined): string | undefined {
  if (relayState !== undefined && Buffer.byteLength(relayState, 'utf8') > MAX_RELAY_STATE_BYTES) {
    return `RelayState is longer than ${MAX_RELAY_STATE_BYTES} bytes`;
  }
  return undefined;
}

async function refuse(ctx: ServiceContext, reason: string, app?: SamlAppRow, issuer?: string): Promise<SamlOutcome> {
  await ctx.events.record(ctx.db, {
    type: 'saml.sso.failed',
    actorId: null,
    detail: { reason, ...(app ? { app_id: app.id } : {}), ...(!app && issuer ? { issuer: issuer.slice(0, 200) } : {}) },
  });
  return { kind: 'error', detail: reason };
}

const continueUrl = (ctx: ServiceContext, requestId: string) =>
  `${ctx.config.baseUrl}/saml/continue?request=${encodeURIComponent(requestId)}`;

/**
 * POST|GET /saml/sso with an AuthnRequest (CONTRACT §19): every check, then the request is stored (its ID once per
 * app) and the browser continues at /saml/continue, where the person signs in. Any refusal is an error page and a
 * `saml.sso.failed` event: nothing is sent to an ACS URL that was not proven registered.
 */
export async function receiveAuthnRequest(ctx: ServiceContext, input: SamlMessageInput): Promise<SamlOutcome> {
  let app: SamlAppRow | undefined;
  let issuer: string | undefined;
  try {
    const tooLong = relayStateProblem(input.relayState);
    if (tooLong) throw new SamlInputError(tooLong);
    const { xml, doc } = readBindingMessage(input);
    issuer = issuerOf(doc.documentElement);
    app = await findSamlAppByEntityId(ctx.db, issuer);
    if (!app) throw new SamlInputError('the Issuer is not a registered SAML application');
    if (!app.enabled) throw new SamlInputError('this SAML application is disabled');
    const request = checkMessageSignature(app, input, xml, doc, 'SAMLRequest');
    if (issuerOf(request) !== app.entityId) throw new SamlInputError('the signed Issuer differs');
    const { id } = checkRequestEnvelope(ctx, request, 'AuthnRequest', idpEndpoints(ctx).sso_url);

    const protocolBinding = attr(request, 'ProtocolBinding');
    if (protocolBinding !== undefined && protocolBinding !== BINDING.post)
      throw new SamlInputError('only the HTTP-POST binding is offered for responses');
    const acsUrlAsked = attr(request, 'AssertionConsumerServiceURL');
    const acsIndexAsked = attr(request, 'AssertionConsumerServiceIndex');
    let acs = app.acsUrls.find((a) => a.default) ?? app.acsUrls[0];
    if (acsUrlAsked !== undefined) {
      const found = app.acsUrls.find((a) => a.url === acsUrlAsked);
      if (!found) throw new SamlInputError('the AssertionConsumerServiceURL is not registered for this application');
      acs = found;
    } else if (acsIndexAsked !== undefined) {
      const found = app.acsUrls.find((a) => String(a.index) === acsIndexAsked);
      if (!found) throw new SamlInputError('the AssertionConsumerServiceIndex is not registered for this application');
      acs = found;
    }
    const now = ctx.clock.now();
    const handle = randomBytes(24).toString('base64url');
    const stored = await insertSamlRequest(ctx.db, {
      id: handle,
      appId: app.id,
      requestId: id,
      acsUrl: acs.url,
      relayState: input.relayState ?? null,
      forceAuthn: attr(request, 'ForceAuthn') === 'true' || attr(request, 'ForceAuthn') === '1',
      isPassive: attr(request, 'IsPassive') === 'true' || attr(request, 'IsPassive') === '1',
      expiresAt: addSeconds(now, SAML_REQUEST_TTL_SECONDS),
      now,
    });
    if (!stored) throw new SamlInputError('this request ID was already used');
    return { kind: 'redirect', url: continueUrl(ctx, handle) };
  } catch (err) {
    if (err instanceof SamlInputError) return refuse(ctx, err.message, app, issuer);
    throw err;
  }
}

/** GET /saml/sso?app=<id> (IdP-initiated, CONTRACT §19): the default ACS, no InResponseTo. */
export async function startIdpInitiated(
  ctx: ServiceContext,
  appId: string,
  principal: Principal | undefined,
  selfUrl: string,
): Promise<SamlOutcome> {
  const app = await findSamlAppById(ctx.db, appId);
  if (!app || !app.enabled) return refuse(ctx, 'unknown or disabled SAML application');
  if (!principal || principal.clientId) return { kind: 'redirect', url: loginUrl(ctx, selfUrl) };
  const now = ctx.clock.now();
  const handle = randomBytes(24).toString('base64url');
  const acs = app.acsUrls.find((a) => a.default) ?? app.acsUrls[0];
  await insertSamlRequest(ctx.db, {
    id: handle,
    appId: app.id,
    requestId: null,
    acsUrl: acs.url,
    relayState: null,
    forceAuthn: false,
    isPassive: false,
    expiresAt: addSeconds(now, SAML_REQUEST_TTL_SECONDS),
    now,
  });
  return continueSso(ctx, handle, principal);
}

const loginUrl = (ctx: ServiceContext, returnTo: string) => `${ctx.config.baseUrl}/login?${new URLSearchParams({ return_to: returnTo })}`;

/**
 * GET /saml/continue?request=…: the stored request meets the browser's session. Not signed in (or ForceAuthn and the
 * sign-in is older than the request): to /login and back here, or NoPassive when the SP asked IsPassive. Signed in:
 * the request is spent (one conditional UPDATE) and the signed Response goes to the ACS URL.
 */
export async function continueSso(ctx: ServiceContext, handle: string, principal: Principal | undefined): Promise<SamlOutcome> {
  const now = ctx.clock.now();
  const pending = await findLiveSamlRequest(ctx.db, handle, now);
  if (!pending) return refuse(ctx, 'the sign-in request is unknown, expired or already answered');
  const app = await findSamlAppById(ctx.db, pending.appId);
  if (!app || !app.enabled) return refuse(ctx, 'this SAML application is disabled', app);
  const session = principal && !principal.clientId ? await findSessionById(ctx.db, principal.sessionId) : undefined;
  const fresh = session && (!pending.forceAuthn || session.authTime.getTime() >= pending.createdAt.getTime() - 1000);
  if (!principal || !session || !fresh) {
    if (pending.isPassive) return answerNoPassive(ctx, app, pending);
    return { kind: 'redirect', url: loginUrl(ctx, continueUrl(ctx, handle)) };
  }
  // MFA_REQUIRED_FOR_ADMINS (CONTRACT §10), as /login applies it: an administrator whose session has no second factor
  // enrols first and comes back here (the request stays live); a passive request gets NoPassive.
  if (needsSecondFactorForAdmin(ctx.settings.current.values, principal)) {
    if (pending.isPassive) return answerNoPassive(ctx, app, pending);
    return { kind: 'redirect', url: `${ctx.config.baseUrl}${enrolUrlFor(continueUrl(ctx, handle))}` };
  }
  const key = await currentSamlKey(ctx);
  return withTransaction(ctx.db, async (trx) => {
    const spent = await consumeSamlRequest(trx, handle, now);
    if (!spent) return refuse(ctx, 'the sign-in request is unknown, expired or already answered', app);
    const sessionIndex = newSamlId();
    const nameId = nameIdFor(ctx, app, principal);
    await insertSamlSession(trx, { sessionIndex, sessionId: session.id, appId: app.id, userId: principal.userId, nameId, now });
    const xml = await buildResponse(ctx, key, app, spent, {
      status: STATUS.success,
      assertion: { principal, nameId, sessionIndex, authTime: session.authTime, amr: session.amr },
    });
    await ctx.events.record(trx, {
      type: 'saml.sso.succeeded',
      actorId: principal.userId,
      subjectId: principal.userId,
      detail: { app_id: app.id, idp_initiated: spent.requestId === null },
    });
    return postedResponse(app, spent, xml);
  });
}

/** IsPassive and nobody (fresh enough) signed in: a signed Response with status NoPassive, the request spent. */
async function answerNoPassive(ctx: ServiceContext, app: SamlAppRow, pending: SamlRequestRow): Promise<SamlOutcome> {
  const key = await currentSamlKey(ctx);
  const spent = await consumeSamlRequest(ctx.db, pending.id, ctx.clock.now());
  if (!spent) return refuse(ctx, 'the sign-in request is unknown, expired or already answered', app);
  await ctx.events.record(ctx.db, { type: 'saml.sso.failed', actorId: null, detail: { reason: 'NoPassive', app_id: app.id } });
  return postedResponse(app, spent, await buildResponse(ctx, key, app, spent, { status: STATUS.noPassive }));
}

/** A Response on its way to the ACS URL of the spent request, by the HTTP-POST binding, with its RelayState. */
function postedResponse(app: SamlAppRow, spent: SamlRequestRow, xml: string): SamlOutcome {
  return {
    kind: 'post',
    action: spent.acsUrl,
    field: 'SAMLResponse',
    message: Buffer.from(xml, 'utf8').toString('base64'),
    relayState: spent.relayState ?? undefined,
    appName: app.name,
  };
}

/** The NameID of CONTRACT §19's formats: the address, a per-app pseudonym, a one-time value, or the user id. */
function nameIdFor(ctx: ServiceContext, app: SamlAppRow, principal: Principal): string {
  switch (app.nameIdFormat) {
    case 'emailAddress':
      return principal.email;
    case 'persistent':
      // Stable for this user at this app, unlinkable across apps without KEYS_SECRET.
      return createHmac('sha256', ctx.config.keysSecret).update(`saml-persistent-nameid:${app.id}:${principal.userId}`).digest('base64url');
    case 'transient':
      return newSamlId();
    case 'unspecified':
      return principal.userId;
  }
}

/** saml:EncryptedAssertion holding the (signed) assertion encrypted to the SP's encryption certificate. */
async function encryptedAssertion(doc: Document, app: SamlAppRow, assertion: Element, id: string, key: SigningMaterial): Promise<Element> {
  const certificate = app.spEncryptionCertificate ?? app.spCertificate;
  // The API refuses encrypt_assertion without a certificate; a row that still lacks one is a server fault.
  if (!certificate) throw new Error(`SAML app ${app.id}: encrypt_assertion without a certificate`);
  let xml = serialize(assertion);
  if (app.signAssertion) xml = signElement(xml, NS.assertion, 'Assertion', id, key);
  const encrypted = parseSamlXml(await encryptToCertificate(xml, certificate)).documentElement;
  return el(doc, NS.assertion, 'saml:EncryptedAssertion', {}, [doc.importNode(encrypted, true) as Element]);
}

interface AssertionFacts {
  principal: Principal;
  nameId: string;
  sessionIndex: string;
  authTime: Date;
  amr: string[];
}

/**
 * The signed Response: exactly one assertion (or none, for an error status), signed per the app's settings. With
 * `encrypt_assertion`, the assertion is signed first (on its own: exclusive c14n makes that the same signature as in
 * place), then encrypted to the SP's certificate and carried as the one EncryptedAssertion; the Response's signature
 * covers the encrypted form.
 */
async function buildResponse(
  ctx: ServiceContext,
  key: SigningMaterial,
  app: SamlAppRow,
  request: SamlRequestRow,
  content: { status: string; assertion?: AssertionFacts },
): Promise<string> {
  const doc = newDocument();
  const issuer = samlEntityId(ctx);
  const now = ctx.clock.now();
  const notOnOrAfter = instant(addSeconds(now, SAML_WINDOW_SECONDS));
  const p = (name: string, attrs: Record<string, string | undefined> = {}, children: Parameters<typeof el>[4] = []) =>
    el(doc, NS.protocol, `samlp:${name}`, attrs, children);
  const a = (name: string, attrs: Record<string, string | undefined> = {}, children: Parameters<typeof el>[4] = []) =>
    el(doc, NS.assertion, `saml:${name}`, attrs, children);
  const responseId = newSamlId();
  const assertionId = newSamlId();
  const inResponseTo = request.requestId ?? undefined;

  let assertion: Element | undefined;
  if (content.assertion) {
    const f = content.assertion;
    const values: Array<[string, string[]]> = [
      [app.attributes.email, [f.principal.email]],
      [app.attributes.given_name, [f.principal.firstName]],
      [app.attributes.family_name, [f.principal.lastName]],
      [app.attributes.name, [`${f.principal.firstName} ${f.principal.lastName}`.trim()]],
      [app.attributes.roles, f.principal.roleNames],
    ];
    const attributes = values
      .map(([name, vals]) => [name, vals.filter((v) => v !== '')] as const)
      .filter(([, vals]) => vals.length > 0)
      .map(([name, vals]) =>
        a(
          'Attribute',
          { Name: name, NameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:uri' },
          vals.map((v) => a('AttributeValue', { 'xsi:type': 'xs:string' }, [v])),
        ),
      );
    assertion = a('Assertion', { 'xmlns:xs': NS.xs, 'xmlns:xsi': NS.xsi, ID: assertionId, Version: '2.0', IssueInstant: instant(now) }, [
      a('Issuer', {}, [issuer]),
      a('Subject', {}, [
        a('NameID', { Format: NAME_ID_FORMAT_URN[app.nameIdFormat] }, [f.nameId]),
        a('SubjectConfirmation', { Method: 'urn:oasis:names:tc:SAML:2.0:cm:bearer' }, [
          a('SubjectConfirmationData', { InResponseTo: inResponseTo, NotOnOrAfter: notOnOrAfter, Recipient: request.acsUrl }),
        ]),
      ]),
      a('Conditions', { NotBefore: instant(addSeconds(now, -SAML_WINDOW_SECONDS)), NotOnOrAfter: notOnOrAfter }, [
        a('AudienceRestriction', {}, [a('Audience', {}, [app.entityId])]),
      ]),
      a('AuthnStatement', { AuthnInstant: instant(f.authTime), SessionIndex: f.sessionIndex }, [
        a('AuthnContext', {}, [
          a('AuthnContextClassRef', {}, [
            f.amr.includes('pwd') && f.amr.length === 1
              ? 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport'
              : 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified',
          ]),
        ]),
      ]),
      attributes.length > 0 && a('AttributeStatement', {}, attributes),
    ]);
  }
  const response = p(
    'Response',
    {
      ID: responseId,
      Version: '2.0',
      IssueInstant: instant(now),
      Destination: request.acsUrl,
      InResponseTo: inResponseTo,
    },
    [
      a('Issuer', {}, [issuer]),
      p('Status', {}, [p('StatusCode', { Value: content.status })]),
      assertion && app.encryptAssertion ? await encryptedAssertion(doc, app, assertion, assertionId, key) : assertion,
    ],
  );
  let xml = serialize(response);
  if (assertion && app.signAssertion && !app.encryptAssertion) xml = signElement(xml, NS.assertion, 'Assertion', assertionId, key);
  // Every Response is signed when the app asks for it, and always when there is no (signed) assertion in it.
  if (app.signResponse || !assertion || !app.signAssertion) xml = signElement(xml, NS.protocol, 'Response', responseId, key);
  return xml;
}
