import { createHook } from 'node:async_hooks';
import net, { type AddressInfo } from 'node:net';
import { createHttpServer, type HttpServer } from '../../src/lib/http-server';

/**
 * The drain of a graceful stop (CONTRACT §23: a stop fails no request), at the level of the connections: a request
 * arriving on an idle keep-alive connection after the drain began is answered with `Connection: close`; a connection
 * that never carried a request, or is idle, is closed once idle for the keep-alive timeout the server announces; no
 * new connection is accepted; the drain ends when the last connection has closed.
 */
let server: HttpServer;
let port: number;
// Wide enough that a loaded machine (a CI worker beside Chromium) does not let the 200 ms pause of the first test reach
// the idle timeout, nor push the drain of the second past its upper bound.
const KEEP_ALIVE_MS = 1500;

beforeEach(async () => {
  server = createHttpServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`answered ${req.url}`);
  });
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterEach(async () => {
  server.closeAllConnections();
  // A test that drains a server of its own leaves this one listening: close it, or the worker cannot exit.
  if (server.listening) await new Promise((resolve) => server.close(resolve));
});

/** A raw connection: what it received so far, and a promise of its end (how: a clean FIN, or an error). */
function connect(): Promise<{ socket: net.Socket; received: () => string; ended: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    const ended = new Promise<string>((done) => {
      socket.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
      socket.on('close', () => done('closed'));
    });
    socket.once('connect', () => resolve({ socket, received: () => data, ended }));
    socket.once('error', reject);
  });
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: sso.test\r\n\r\n`;
const until = async (check: () => boolean) => {
  for (let i = 0; !check(); i++) {
    if (i > 1000) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

test('a request on an idle keep-alive connection during the drain is answered, with Connection: close', async () => {
  const a = await connect();
  a.socket.write(get('/first'));
  await until(() => a.received().includes('answered /first'));
  expect(a.received()).toMatch(/keep-alive/i);

  const drained = server.drain();
  // The connection is idle when the drain begins; its client sends another request a moment later.
  await new Promise((r) => setTimeout(r, 200));
  a.socket.write(get('/second'));
  expect(await a.ended).toBe('closed');
  const second = a.received().split('answered /first')[1]!;
  expect(second).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  expect(second).toMatch(/\r\nConnection: close\r\n/i);
  expect(second).toMatch(/answered \/second$/);
  await drained;
});

test('idle connections, used or never, close once idle for the keep-alive timeout; no new connection is accepted', async () => {
  const used = await connect();
  used.socket.write(get('/once'));
  await until(() => used.received().includes('answered /once'));
  const unused = await connect();

  const started = Date.now();
  const drained = server.drain();
  await expect(connect()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  expect(await unused.ended).toBe('closed');
  expect(await used.ended).toBe('closed');
  await drained;
  const took = Date.now() - started;
  expect(took).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 250);
  expect(took).toBeLessThan(KEEP_ALIVE_MS + 5_000);
});

test('a request in flight when the drain begins is answered, then its connection closes', async () => {
  const slow = createHttpServer((req, res) => setTimeout(() => res.end('late answer'), 300));
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  try {
    port = (slow.address() as AddressInfo).port;
    const a = await connect();
    a.socket.write(get('/slow'));
    await new Promise((r) => setTimeout(r, 50));
    const drained = slow.drain();
    expect(await a.ended).toBe('closed');
    expect(a.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*Connection: close\r\n[^]*late answer$/i);
    await drained;
  } finally {
    slow.closeAllConnections();
  }
});

test('a drained server leaves no timer of its own running', async () => {
  // The timers the server starts while it begins to listen (Node's check of its connections against requestTimeout).
  const started = new Set<number>();
  const stopped = new Set<number>();
  const hook = createHook({
    init: (id, type) => void (type === 'Timeout' && started.add(id)),
    destroy: (id) => void stopped.add(id),
  }).enable();
  try {
    const own = createHttpServer((_req, res) => res.end('ok'), { checkIntervalMs: 50 });
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
    await new Promise((r) => setImmediate(r));
    const timers = [...started];
    expect(timers.length).toBeGreaterThan(0);
    port = (own.address() as AddressInfo).port;
    const a = await connect();
    a.socket.write(get('/once'));
    await until(() => a.received().endsWith('ok'));
    a.socket.end();
    await own.drain();
    await new Promise((r) => setImmediate(r));
    expect(timers.filter((id) => !stopped.has(id))).toEqual([]);
  } finally {
    hook.disable();
  }
});
