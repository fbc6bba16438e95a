import type { Request } from 'express';

/**
 * The request whose code is running synchronously right now, for the views (its language and brand, views/env.ts):
 * the app's one router sets it around every step it runs (src/http/dispatch.ts), the route adapter around writing an
 * asynchronous handler's answer, and `runInRequest` wherever else a page is drawn for a request. It is never carried
 * across an `await` (issue 33: Node 20's AsyncLocalStorage, which did, runs promise hooks for every promise of the
 * process): code after an `await` sees no request here, never another request's, and takes what it needs from its
 * input (the handler's `env` and `ctx`).
 */
let running: Request | undefined;

/** The request whose code is running synchronously now; undefined outside one, and after any `await`. */
export function currentRequest(): Request | undefined {
  return running;
}

/** Marks `req` as running (the router, around each step it runs); give what it returns to `leaveRequest` after. */
export function enterRequest(req: Request): Request | undefined {
  const before = running;
  running = req;
  return before;
}

export function leaveRequest(before: Request | undefined): void {
  running = before;
}

/** Runs `fn` synchronously as part of `req`: what `fn` draws is in the request's language and brand. */
export function runInRequest<T>(req: Request, fn: () => T): T {
  const before = enterRequest(req);
  try {
    return fn();
  } finally {
    leaveRequest(before);
  }
}
