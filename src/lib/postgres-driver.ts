/**
 * `pg` tells whether it runs on Cloudflare Workers when it loads (lib/stream.js) by constructing a `Response` when
 * there is no `navigator`, as on Node 20. Node defines `Response` lazily: the first touch loads its whole fetch
 * implementation, about 70 ms of a start and 10 MB of resident memory (3 MB of heap) that nothing else in a start, or
 * on the request path, uses (the outbound client is the undici package, loaded on first use). The driver is therefore
 * loaded here once with `Response` hidden, and Node's lazy definition is put back as it was; every later
 * `require('pg')` (knex, graphile-worker) gets this module. pg then takes the Node runtime's streams, as it would.
 */
export function loadPostgresDriver(load: NodeJS.Require): void {
  const response = Object.getOwnPropertyDescriptor(globalThis, 'Response');
  if (response === undefined || response.configurable !== true) {
    load('pg');
    return;
  }
  Object.defineProperty(globalThis, 'Response', { value: undefined, configurable: true, writable: true, enumerable: false });
  try {
    load('pg');
  } finally {
    Object.defineProperty(globalThis, 'Response', response);
  }
}
