import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';
import { installPipeline } from '../../src/http/pipeline';

/**
 * The app's one pipeline (src/http/pipeline.ts): the steps `app.use` mounts run in order, as under Express's router, for
 * every request; a thrown error and a rejected promise reach the next error handler; past the last step, Express's
 * final handler.
 */
function appWith(steps: Array<RequestHandler | ErrorRequestHandler>) {
  const app = express();
  installPipeline(app);
  for (const step of steps) app.use(step);
  return app;
}

const errors: ErrorRequestHandler = (err: Error, _req, res, _next) => {
  res.status(418).json({ error: err.message });
};

test('steps run in order with the request as Express makes it (prototypes, baseUrl, originalUrl, params)', async () => {
  const seen: string[] = [];
  const first: RequestHandler = (req, _res, next) => {
    seen.push(`first ${req.baseUrl === '' ? 'root' : req.baseUrl} ${req.originalUrl} ${JSON.stringify(req.params)}`);
    next();
  };
  const second: RequestHandler = (req, res) => {
    seen.push('second');
    res.json({ query: req.query, ip: typeof req.ip });
  };
  const app = appWith([first, second, () => seen.push('never')]);
  const res = await request(app).get('/a/b?x=1');
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ query: { x: '1' }, ip: 'string' });
  expect(seen).toEqual(['first root /a/b?x=1 {}', 'second']);
});

test('a thrown error, a rejected promise and next(err) reach the error handler, skipping the steps between', async () => {
  const skipped = jest.fn<void, []>();
  const passing: RequestHandler = (_req, _res, next) => next(new Error('passed'));
  for (const failing of [
    () => {
      throw new Error('thrown');
    },
    async () => {
      throw new Error('rejected');
    },
    passing,
  ]) {
    const app = appWith([failing, () => skipped(), errors]);
    const res = await request(app).get('/');
    expect(res.status).toBe(418);
    expect(['thrown', 'rejected', 'passed']).toContain(res.body.error);
  }
  expect(skipped).not.toHaveBeenCalled();
});

test("past the last step, Express's final handler answers 404; a mount path is refused", async () => {
  const onward: RequestHandler = (_req, _res, next) => next();
  const app = appWith([onward]);
  expect((await request(app).get('/nothing')).status).toBe(404);
  expect(() => app.use('/admin', onward)).toThrow(/mounts steps at \/ only/);
});
