import type { ClientCache } from './oauth/client-cache';
import type { Locale } from '../i18n';
import type { Config } from '../config';
import type { Db } from '../db';
import type { Clock } from '../lib/clock';
import type { JwtService } from '../lib/jwt';
import type { Logger } from '../lib/logger';
import type { OperatorMetrics } from '../lib/metrics';
import type { PasswordHasher } from '../lib/password';
import type { Sealer } from '../lib/sealed';
import { servingEvents, type EventBus, type RequestOrigin } from './events';
import type { MailHtmlRenderer } from './mail';
import { servingMailer, type Mailer } from './mailer.service';
import type { ClientKeysFetcher } from './oauth/client-keys';
import type { MetadataDocumentFetcher } from './oauth/registration/metadata-document-fetcher';
import type { LiveSettings } from './settings/live-settings';

/** What every service function receives: the process-wide dependencies, built once in server.ts or a test. */
export interface ServiceContext {
  config: Readonly<Config>;
  /** CONTRACT §18: the runtime settings in force (`settings.current`: an in-memory snapshot, live on every instance). */
  settings: LiveSettings;
  db: Db;
  clock: Clock;
  logger: Logger;
  jwt: JwtService;
  passwords: PasswordHasher;
  mailer: Mailer;
  /** Draws a mail's HTML part (the mail port, services/mail.ts; the views' renderer in the app). */
  mailHtml: MailHtmlRenderer;
  /** Security events: audit trail (in the change's transaction), log, metrics (services/events.ts). */
  events: EventBus;
  /** The Prometheus registry and operator counters GET /metrics serves (lib/metrics.ts). */
  metrics: OperatorMetrics;
  /** AES-GCM for secrets at rest (lib/sealed.ts). */
  sealer: Sealer;
  /** CONTRACT §13: fetches and caches Client ID Metadata Documents (one cache per process, bounded). */
  clientMetadata: MetadataDocumentFetcher;
  /** Issue 34: fetches and caches the `jwks_uri` key sets of private_key_jwt clients (one cache per process, bounded). */
  clientKeys: ClientKeysFetcher;
  /** Issue 33: the clients this instance authenticated, kept while it hears every change (services/oauth/client-cache.ts). */
  clients: ClientCache;
  /**
   * The request this context serves: set on the context the route adapter hands a handler (`forRequest`), undefined on
   * the process's own (jobs, the CLI, start-up). Its origin completes the security events recorded through `events`,
   * its language is the mails'.
   */
  request?: ServedRequest;
}

/**
 * What routers and console sections are built with, once (`routerOf((app, deps) => …)`, `deps.ctx`): the process's
 * context without what records or mails (`events`, `mailer`) and without a request. A handler serves a request with its
 * input's `ctx` (the request's, `forRequest`); a service called with this one would record its events without the
 * request's origin, so the compiler refuses it.
 */
export type AppContext = Omit<ServiceContext, 'events' | 'mailer' | 'request'>;

/** What a service may know of the request it serves (src/middleware/request-context.ts makes it from Express's request). */
export interface ServedRequest {
  /** Who is asking, read when an event is recorded (the caller is known once authentication has run). */
  origin(): RequestOrigin;
  /** The language this request's pages are in, once a page or `env` has chosen it; undefined if none has. */
  locale(): Locale | undefined;
}

/**
 * The context of one request (issue 33): the process's, with the request and an event bus that completes every event
 * with the request's origin. Passed explicitly from the route adapter to the handler and on to every service, instead
 * of an AsyncLocalStorage store (which on Node 20 runs promise hooks for every promise of the process).
 */
export function forRequest(ctx: ServiceContext, request: ServedRequest): ServiceContext {
  const events = servingEvents(ctx.events, request.origin);
  // A mail that fails after the answer is recorded as the request's too (its id, IP, user agent).
  const mailer = servingMailer(ctx.mailer, (event) => events.record(ctx.db, event));
  return { ...ctx, request, events, mailer };
}

/** Where a request came from, recorded on the sessions it creates. */
export interface RequestMeta {
  ip?: string | null;
  userAgent?: string | null;
  /** When the request reached the server (before the client authenticated), in the clock's time; the code exchange's replay rule. */
  arrivedAt?: Date;
}
