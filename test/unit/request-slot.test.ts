import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { runChain } from '../../src/http/dispatch';
import { currentRequest, runInRequest } from '../../src/lib/request-context';
import { messagesFor, type PageEnv } from '../../src/i18n';
import { pageEnv, pageEnvOutsideRequests } from '../../src/views/env';

/**
 * Issue 33: the request is known to its synchronous code only (src/lib/request-context.ts), set by the app's one router
 * around every step (runChain) instead of an AsyncLocalStorage store. What a view reads there is its request's; after an
 * `await` it is no request, never another request's, even with two requests interleaved.
 */
const fakeRequest = (name: string): Request => Object.assign(Object.create(null) as Request, { name });
const nameOf = (req: Request | undefined) => (req ? (req as unknown as { name: string }).name : 'none');
const noResponse = Object.create(null) as Response;

test('a step sees its request in its synchronous part, and none after an await, with another request interleaved', async () => {
  const seen: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slow: RequestHandler = async (req, _res, next) => {
    seen.push(`slow before: ${nameOf(currentRequest())} (${nameOf(req)})`);
    await gate;
    seen.push(`slow after: ${nameOf(currentRequest())}`);
    next();
  };
  const quick: RequestHandler = (req, _res, next) => {
    seen.push(`quick: ${nameOf(currentRequest())} (${nameOf(req)})`);
    release();
    next();
  };
  const finished: string[] = [];
  const done =
    (name: string): NextFunction =>
    () => {
      finished.push(`${name} done: ${nameOf(currentRequest())}`);
    };
  runChain([slow], fakeRequest('a'), noResponse, done('a'));
  runChain([quick], fakeRequest('b'), noResponse, done('b'));
  expect(currentRequest()).toBeUndefined();
  await gate;
  await new Promise((resolve) => setImmediate(resolve));
  expect(seen).toEqual(['slow before: a (a)', 'quick: b (b)', 'slow after: none']);
  // `done` runs inside the last step's synchronous part (as Express's next does): the quick one's, not the awaited one's.
  expect(finished).toEqual(['b done: b', 'a done: none']);
});

test('an error step runs as part of its request too, and runInRequest nests and restores', () => {
  const seen: string[] = [];
  const fails: RequestHandler = () => {
    throw new Error('refused');
  };
  const handles = (err: Error, req: Request, _res: Response, _next: NextFunction) => {
    seen.push(`${err.message} in ${nameOf(currentRequest())}`);
    runInRequest(fakeRequest('inner'), () => seen.push(`nested ${nameOf(currentRequest())}`));
    seen.push(`back in ${nameOf(currentRequest())} (${nameOf(req)})`);
  };
  runChain([fails, handles], fakeRequest('c'), noResponse, () => undefined);
  expect(seen).toEqual(['refused in c', 'nested inner', 'back in c (c)']);
  expect(currentRequest()).toBeUndefined();
});

test('a page environment read outside a request answers English and tells the log once per process; test runs throw', () => {
  const told: Error[] = [];
  pageEnvOutsideRequests((error) => told.push(error));
  expect(pageEnv().locale).toBe('en');
  expect(pageEnv().t).toBe(messagesFor('en'));
  expect(told).toHaveLength(1);
  expect(told[0].message).toMatch(/outside a request/);
  // Inside a request it reads the request's, and tells nothing.
  const german = { locale: 'de', t: messagesFor('de'), brand: { name: 'Acme', color: '#123456' } } as PageEnv;
  const req = Object.assign(Object.create(null) as Request, { pageEnv: german });
  expect(runInRequest(req, () => pageEnv().brand.name)).toBe('Acme');
  expect(told).toHaveLength(1);
  // A second app of the process does not tell again.
  pageEnvOutsideRequests((error) => told.push(error));
  pageEnv();
  expect(told).toHaveLength(1);
  pageEnvOutsideRequests('throw');
  expect(() => pageEnv()).toThrow(/outside a request/);
  // Once test runs throw, an app made later (whatever its NODE_ENV) does not turn it off.
  pageEnvOutsideRequests((error) => told.push(error));
  expect(() => pageEnv()).toThrow(/outside a request/);
});
