import type { Express, NextFunction, Request, Response } from 'express';
import { runChain, type Step } from './dispatch';

/**
 * The app's one pipeline (issue 33): the steps the app mounts (`app.use`: the global step, the one router of
 * src/http/dispatch.ts, the 404 and the one error handler), run in order by `runChain`, as Express's router runs its
 * middleware, without matching each step's path (every one is mounted at `/`). Express stays the framework: its
 * `app.handle` still prepares the request and response objects (their prototypes, which the service's server has
 * already given them, `res.locals`, the final handler) and hands them to this as the app's router; the steps are
 * Express middleware and error handlers.
 *
 * Express's router would, for each request, parse the URL again for each of the four steps, match it against each
 * step's mount path and keep closures to restore `baseUrl`, `next` and `params`: work no step here uses (a route's
 * parameters come from the one router). Installed by createApp on the app it builds; an app built elsewhere (tests
 * mounting a scope of their own) keeps Express's router. Not Express's: `next('route')` and `next('router')` (which only
 * Express routes give a meaning) count as errors, and `req.next` is not set; no step here uses either.
 */
export class Pipeline {
  private readonly steps: Step[] = [];

  /** What Express's `app.use(fn)` calls: steps at `/` only (a mount path would need Express's router). */
  use(path: unknown, ...steps: Step[]): this {
    if (path !== '/') throw new Error(`the app's pipeline mounts steps at / only, not at ${String(path)}`);
    this.steps.push(...steps);
    return this;
  }

  /** What Express's `app.handle` calls with each request: the steps in order; past the last one, Express's final handler. */
  readonly handle = (req: Request, res: Response, done: NextFunction): void => {
    // What Express's router sets before its first step, and steps read (the access log's path, mounted apps); the
    // one router sets the matched route's parameters.
    req.baseUrl = '';
    req.originalUrl ||= req.url;
    req.params = {};
    runChain(this.steps, req, res, done);
  };
}

/** Makes `app`'s router the one pipeline: every later `app.use` adds a step to it. */
export function installPipeline(app: Express): Pipeline {
  const pipeline = new Pipeline();
  Object.defineProperty(app, 'router', { value: pipeline, configurable: true, enumerable: true, writable: false });
  return pipeline;
}
