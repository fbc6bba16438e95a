import type { Response } from 'express';
import { z } from 'zod';
import { AppError, type ErrorDetail } from '../errors';
import { Invalid, Page, Redirect, writeCookiesAndHeaders, type Outcome } from '../http/outcome';
import {
  callerOf,
  CONSOLE,
  checked,
  fieldErrors,
  frameOf,
  refusalOf,
  refusalStatus,
  refuseConsoleForm,
  serviceFieldErrors,
  setFlash,
  type EndpointCaller,
} from '../routes/console/console-kit';
import { text, writePage } from '../routes/pages/page-kit';
import {
  declareRouter,
  route,
  type DeclaredRoute,
  type Endpoint,
  type OutcomeRenderer,
  type RouteDecl,
  type RouteInput,
} from '../routes/route';
import type { RouteDeps } from '../routes/types';
import type { FieldErrors } from '../views/console/components';
import type { ConsoleFrame, ConsoleSection } from '../views/console/layout';
import { renderConfirm } from '../views/console/pages';

/** What a console area needs besides its API's declarations and its views: one import (src/console/<area>/*.console.ts). */
export { Redirect, redirect } from '../http/outcome';
export { checked, lines, list } from '../routes/console/console-kit';
export { optionalText, text } from '../routes/pages/page-kit';
export type { RouteDeps } from '../routes/types';
export type { FieldErrors } from '../views/console/components';
export { pageEnv } from '../views/env';

/**
 * A console action built from the REST endpoint it mirrors (CONTRACT §14): the guard, the path parameters, the body
 * (or query) schema and the handler (service call + presenter) are the API's own, so the console cannot drift from
 * its API. The console adds only what a browser needs: the form's fields and their mapping onto the API's input, an
 * optional confirmation, the form shown again when refused, and what comes next (a page or a redirect with a flash).
 *
 *   consoleAction(webhooksApi.rotateSecret, {
 *     path: '/webhooks/:webhookId/rotate',
 *     confirm: async ({ call, params }) => ({
 *       title: x().rotateTitle((await call(webhooksApi.get, { params })).webhook.url), text: x().rotateText, button: x().rotate,
 *     }),
 *     back: () => '/admin/webhooks',
 *     done: (r) => consolePage(views.renderWebhookSecret, { ...r, rotated: true }, x().rotatedTitle),
 *   })
 */

/** A console page: a view applied to the console's frame (the kit fills in account, CSRF value, flash and errors). */
export class ConsolePage extends Page<ConsoleFrame> {}

export function consolePage<P>(
  view: (frame: ConsoleFrame, props: P) => string,
  props: P,
  title: string,
  status = 200,
  errors?: FieldErrors,
): ConsolePage {
  return new ConsolePage((frame) => view(frame, props), title, status, errors);
}

/** What a console action answers. */
export type ConsoleOutcome = ConsolePage | Redirect;

type FormSchema = z.ZodObject;
type FormOf<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

/** What an action's callbacks are given: the endpoint's params, the form, and the caller (principal, call, allows). */
export interface ActionInput<D extends RouteDecl, S> extends EndpointCaller {
  params: RouteInput<D>['params'];
  /** The form (a post's body, a page's query) as sent, each field a string. */
  form: FormOf<S>;
}

/** What a page helper needs of an action's input (any action's). */
export type Caller = Pick<ActionInput<RouteDecl, unknown>, 'principal' | 'call' | 'allows'>;

export interface ActionOptions<D extends RouteDecl, R, S extends FormSchema | undefined> {
  /** The console path (relative to /admin), with the endpoint's path parameters. */
  path: string;
  /** `get` for a page, `post` for a form; by default the endpoint's GET is a page and everything else a post. */
  method?: 'get' | 'post';
  summary?: string;
  /** The form's fields, lenient (`text()`): a form is never refused by its shape, only by the API's schema. */
  form?: S;
  /** The form as the endpoint's input (its body, or its query for a GET), checked by the endpoint's own schema. */
  input?: (form: FormOf<S>, a: ActionInput<D, S>) => unknown;
  /** A post's form as the endpoint's query (e.g. a dry-run switch), checked by the endpoint's own query schema. */
  query?: (form: FormOf<S>, a: ActionInput<D, S>) => unknown;
  /**
   * Asks first: a post without `confirm=yes` answers this question page (the title is the question; cancel goes one
   * level up). A function, so that its sentences are in the request's language.
   */
  confirm?: (a: ActionInput<D, S>) => Confirmation | Promise<Confirmation>;
  /**
   * What the console answers before calling the endpoint (undefined: go on): a refusal in its own words, e.g. rotating
   * the secret of an application the page shows as deactivated, or "nothing changed".
   */
  before?: (a: ActionInput<D, S>) => Promise<ConsoleOutcome | undefined>;
  /** The form again, with `refused.errors` beside its fields and `refused.values` as entered (a refused post). */
  invalid?: (refused: Invalid<FormOf<S>>, a: ActionInput<D, S>) => ConsolePage | Promise<ConsolePage>;
  /** Where a service's refusal goes, as the flash (actions without a form: a stale id, a conflict). */
  back?: (params: RouteInput<D>['params']) => string;
  /** The field a service's refusal without details is shown beside. */
  field?: string;
  done: (result: R, a: ActionInput<D, S>) => ConsoleOutcome | Promise<ConsoleOutcome>;
}

/**
 * A form's mapping onto its endpoint's input, declared once in the area's *.form.ts and spread into each action that
 * posts it (create and update): the fields, the input built from them, the field a refusal naming none is shown beside.
 */
/** A checkbox of a form: checked sends "true" (true), unchecked sends nothing (false). */
export const checkbox = () => text(10).transform(checked);

export const formMapping = <S extends FormSchema>(m: { form: S; input: (f: z.output<S>) => unknown; field?: string }) => m;

const confirmField = z.object({ confirm: text(10) });

export interface Confirmation {
  title: string;
  text: string;
  button: string;
}

/** The console's last step: a page in the console's frame, or a 303 with the flash of post-redirect-get. */
export function renderConsoleOutcome(section: ConsoleSection | undefined): OutcomeRenderer {
  return (outcome: Outcome, req, res, config) => {
    if (outcome instanceof Redirect) {
      writeCookiesAndHeaders(outcome, res);
      if (outcome.flash) setFlash(res, config, outcome.flash.kind, outcome.flash.message);
      return res.redirect(outcome.status, outcome.to);
    }
    const principal = req.principal;
    if (!(outcome instanceof ConsolePage) || !principal) throw new Error(`${req.method} ${req.path}: not a console outcome`);
    writePage(outcome, res, () => ({ ...frameOf(req, res, config, principal, section, outcome.title), errors: outcome.errors }));
  };
}

/** The console router of one section (`createConsoleXRouter`), each route an action built from its REST endpoint. */
export const consoleRouter =
  (section: ConsoleSection, actions: (deps: RouteDeps) => Array<(s: Section) => DeclaredRoute>) => (deps: RouteDeps) =>
    declareRouter(
      deps,
      actions(deps).map((a) => a({ section })),
      { tags: ['Console'] },
    );

/**
 * The `confirm:` of an action about one thing: the question names it, read through `get` for the same caller (behind
 * `get`'s own guard), e.g. `asking(api.get, (r) => r.webhook.url, (url) => ({ title: x().deleteTitle(url), … }))`, or with `saying`.
 */
export const asking =
  <G extends RouteDecl, R>(get: Endpoint<G, R>, nameOf: (r: R) => string, says: () => (name: string) => Confirmation) =>
  async ({ call, params }: { call: Caller['call']; params: unknown }): Promise<Confirmation> => {
    // The words are the request's, read before the await (lib/request-context.ts); the name fills them in after it.
    const ask = says();
    return ask(nameOf(await call(get, { params })));
  };

/**
 * The question of an area's action `verb` as its catalogue words it: the title `<verb>Title(name)`, the sentence
 * `<verb>Text`, the button `<verb>`, e.g. `asking(api.get, (r) => r.app.name, saying('delete', x))`.
 */
export const saying =
  <V extends string>(verb: V, catalogue: () => Record<`${V}Title`, (name: string) => string> & Record<V | `${V}Text`, string>) =>
  () => {
    const says = catalogue();
    const titles: Record<`${V}Title`, (name: string) => string> = says;
    const words: Record<V | `${V}Text`, string> = says;
    return (name: string): Confirmation => ({ title: titles[`${verb}Title`](name), text: words[`${verb}Text`], button: words[verb] });
  };

interface Section {
  section: ConsoleSection;
}

export function consoleAction<D extends RouteDecl, R, S extends FormSchema | undefined = undefined>(
  e: Endpoint<D, R>,
  options: ActionOptions<D, R, S>,
): (s: Section) => DeclaredRoute {
  return ({ section }) => {
    const d = e.decl;
    const method = options.method ?? (d.method === 'get' ? 'get' : 'post');
    const fields: FormSchema = options.form ?? z.object({});
    const decl = declOf(d, section, method, options.path, options.summary, options.confirm ? fields.extend(confirmField.shape) : fields);
    const run: Endpoint<RouteDecl, R> = e;
    return route(decl, async (input, req) => {
      const principal = input.principal;
      const sent = fieldsOf(method === 'post' ? input.body : input.query);
      const a = typed<D, S>({ params: input.params, form: sent, ...callerOf(input.ctx, principal, req) });
      // Each callback's words are in the request's language: run as part of the request (never across an await).
      const inReq = a.inRequest;
      if (options.confirm && sent.confirm !== 'yes') {
        const confirm = options.confirm;
        const { title, text: message, button } = await inReq(() => confirm(a));
        const action = `/admin${fill(options.path, input.params)}`;
        const cancel = action.slice(0, action.lastIndexOf('/'));
        return consolePage(renderConfirm, { message, action, button, cancel }, title);
      }
      const refuse = async (errors: FieldErrors, status: number, details: readonly ErrorDetail[] = []) => {
        if (!options.invalid) return undefined;
        const invalid = options.invalid;
        const again = await inReq(() => invalid(new Invalid(errors, a.form, status, details), a));
        return new ConsolePage(again.render, again.title, status, again.errors ?? errors);
      };
      // The console's own refusal comes first: its words beat the schema's (e.g. "Choose a role" for an empty choice).
      const before = options.before;
      const early = before ? await inReq(() => before(a)) : undefined;
      if (early) return early;
      const schema = d.method === 'get' ? d.query : d.body;
      let apiInput: unknown = undefined;
      if (options.input) {
        const toInput = options.input;
        apiInput = await inReq(() => toInput(a.form, a));
        if (schema) {
          const parsed = schema.safeParse(apiInput);
          if (!parsed.success) {
            const shown = await refuse(
              inReq(() => fieldErrors(parsed.error.issues)),
              400,
            );
            if (shown) return shown;
            throw new AppError('validation_error', 'Input is invalid');
          }
          apiInput = parsed.data;
        }
      }
      let apiQuery: unknown = undefined;
      if (options.query && method === 'post' && d.method !== 'get') {
        const toQuery = options.query;
        const parsed = d.query ? d.query.safeParse(await inReq(() => toQuery(a.form, a))) : undefined;
        if (parsed && !parsed.success) {
          const shown = await refuse(
            inReq(() => fieldErrors(parsed.error.issues)),
            400,
          );
          if (shown) return shown;
          throw new AppError('validation_error', 'Input is invalid');
        }
        apiQuery = parsed?.data;
      }
      let result: R;
      try {
        const [query, body] = d.method === 'get' ? [apiInput, undefined] : [apiQuery, apiInput];
        result = await run.run({ params: input.params, query, body, principal }, input.ctx);
      } catch (err) {
        const errors = options.invalid ? inReq(() => serviceFieldErrors(err, options.field ?? '_form')) : undefined;
        const shown = errors ? await refuse(errors, refusalStatus(err), err instanceof AppError ? (err.details ?? []) : []) : undefined;
        if (shown) return shown;
        const refusal = options.back ? inReq(() => refusalOf(err)) : undefined;
        if (options.back && refusal !== undefined) return new Redirect(options.back(a.params), { kind: 'error', message: refusal });
        throw err;
      }
      return inReq(() => options.done(result, a));
    });
  };
}

/** A page guarded like `e` that does not call it: the empty form of a create (`form`: its query, e.g. a preset). */
export function consoleForm<D extends RouteDecl, S extends FormSchema | undefined = undefined>(
  e: Endpoint<D, unknown>,
  options: { path: string; summary?: string; form?: S; page: (a: ActionInput<D, S>) => ConsolePage | Promise<ConsolePage> },
): (s: Section) => DeclaredRoute {
  return ({ section }) =>
    route(
      declOf(e.decl, section, 'get', options.path, options.summary ?? `Console: ${e.decl.summary} (form)`, options.form ?? z.object({})),
      (input, req) =>
        options.page(
          typed<D, S>({
            params: input.params,
            form: fieldsOf(input.query),
            ...callerOf(input.ctx, input.principal, req),
          }),
        ),
    );
}

/**
 * The three routes a section opens with, from its list and create endpoints: the list page (`path`), the empty form
 * of a create (`path/new`) and the create post (`path`), e.g.
 * `...consoleListing(api, '/webhooks', { list: (r) => consolePage(…), form: () => form({}), create: { ...webhookBody, invalid, done } })`.
 */
export function consoleListing<L extends RouteDecl, LR, C extends RouteDecl, CR, S extends FormSchema | undefined = undefined>(
  api: { list: Endpoint<L, LR>; create: Endpoint<C, CR> },
  path: string,
  o: {
    list: ActionOptions<L, LR, undefined>['done'];
    form: (a: ActionInput<C, undefined>) => ConsolePage | Promise<ConsolePage>;
    create: Omit<ActionOptions<C, CR, S>, 'path'>;
  },
): Array<(s: Section) => DeclaredRoute> {
  return [
    consoleAction(api.list, { path, done: o.list }),
    consoleForm(api.create, { path: `${path}/new`, page: o.form }),
    consoleAction(api.create, { ...o.create, path }),
  ];
}

/**
 * A download guarded like `e` whose form is checked by `e`'s own query schema (the CSV of the audit log): a refused
 * form is the `invalid` page, before the first byte; then `write` streams to `res`, the one thing a console handler
 * still writes itself.
 */
export function consoleStream<Q extends z.ZodType, S extends FormSchema>(
  e: Endpoint<RouteDecl<Schema, Q, Schema>, unknown>,
  options: {
    path: string;
    summary: string;
    form: S;
    input: (form: z.output<S>) => unknown;
    invalid: (refused: Invalid<z.output<S>>, a: Caller) => ConsolePage | Promise<ConsolePage>;
    write: (query: z.output<Q>, res: Response, ctx: RouteDeps['serviceContext']) => Promise<void>;
  },
): (s: Section) => DeclaredRoute {
  return ({ section }) =>
    route(
      {
        ...declOf(e.decl, section, 'get', options.path, options.summary, options.form),
        response: { description: 'a download', kind: 'html' },
      },
      async (input, req, res) => {
        const form = options.form.parse(input.query);
        const parsed = e.decl.query?.safeParse(options.input(form));
        if (!parsed?.success) {
          const errors = parsed ? fieldErrors(parsed.error.issues) : {};
          const again = await options.invalid(new Invalid(errors, form), callerOf(input.ctx, input.principal, req));
          return new ConsolePage(again.render, again.title, 400, errors);
        }
        await options.write(parsed.data, res, input.ctx);
      },
    );
}

type Schema = z.ZodType | undefined;

/** The console declaration of an endpoint's action: the endpoint's guard and params, the form, the console's steps. */
function declOf(
  d: RouteDecl,
  section: ConsoleSection,
  method: 'get' | 'post',
  path: string,
  summary: string | undefined,
  form: FormSchema,
) {
  return {
    ...CONSOLE,
    method,
    path,
    summary: summary ?? `Console: ${d.summary}`,
    ...(d.permission !== undefined ? { permission: d.permission } : {}),
    ...(d.role !== undefined ? { role: d.role } : {}),
    ...(d.admin !== undefined ? { admin: d.admin } : {}),
    params: d.params,
    ...(d.invalid ? { invalid: d.invalid } : {}),
    ...(method === 'post' ? { body: form, form: true, csrf: refuseConsoleForm } : { query: form }),
    outcome: renderConsoleOutcome(section),
  };
}

/**
 * The one cast of the console's edge: the action's input is built at runtime from the declaration made of the
 * endpoint's own params schema and the action's form schema, so it is exactly ActionInput<D, S>.
 */
function typed<D extends RouteDecl, S>(a: ActionInput<RouteDecl, FormSchema>): ActionInput<D, S> {
  return a as unknown as ActionInput<D, S>;
}

const fieldsOf = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null ? Object.fromEntries(Object.entries(v)) : {};

/** `/webhooks/:webhookId/rotate` with the request's parameters. */
function fill(path: string, params: unknown): string {
  const values = fieldsOf(params);
  return path.replace(/:([A-Za-z]+)/g, (_m, name: string) => encodeURIComponent(String(values[name] ?? '')));
}
