import zlib from 'node:zlib';
import { ManualClock } from '../../src/lib/clock';
import {
  createMetadataDocumentFetcher,
  MetadataDocumentRefused,
  type MetadataDocumentFetcherOptions,
} from '../../src/services/oauth/registration/client-metadata.service';
import { documentHandler, startHttpsHost, type HttpsHost } from '../helpers/mcp-https';

/**
 * CONTRACT §13's fetcher of Client ID Metadata Documents, against a real https server (self-signed, trusted through
 * the fetcher's CA option) and resolvers that answer what an attacker's DNS would. Every refusal is checked for what
 * it says and, where a server could have been reached, for the server never having been asked.
 */
const documents = new Map<string, { body: unknown; cacheControl?: string; status?: number }>();
let host: HttpsHost;
let slowHits = 0;

beforeAll(async () => {
  const serveDocument = documentHandler(documents);
  host = await startHttpsHost((req, res) => {
    if (req.url === '/redirect.json') {
      res.writeHead(302, { location: `${host.origin}/client.json` });
      return res.end();
    }
    if (req.url === '/trickle.json') {
      // Slowloris: the status at once, then one byte every 100 ms, never finishing.
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(drip));
      return;
    }
    if (req.url === '/gzip-bomb.json') {
      // 5 KB on the wire, 5 MB once inflated.
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      return res.end(zlib.gzipSync(Buffer.alloc(5 * 1024 * 1024, 32)));
    }
    if (req.url === '/slow.json') {
      slowHits++;
      // Far beyond the fetcher's 2 s, so that a loaded machine firing its timer late still sees the timeout.
      const answer = setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(doc(`${host.origin}/slow.json`)));
      }, 10_000);
      res.on('close', () => clearTimeout(answer));
      return;
    }
    serveDocument(req, res);
  });
});
afterAll(async () => {
  await host.close();
});
beforeEach(() => {
  documents.clear();
  host.hits.clear();
});

const doc = (clientId: string, extra: Record<string, unknown> = {}) => ({
  client_id: clientId,
  client_name: 'Example MCP Client',
  redirect_uris: ['http://127.0.0.1/callback'],
  token_endpoint_auth_method: 'none',
  ...extra,
});

function fetcher(options: Partial<MetadataDocumentFetcherOptions> = {}) {
  return createMetadataDocumentFetcher({
    clock: new ManualClock(),
    allowedHosts: ['localhost'],
    ca: host.ca,
    resolve: async (name) => (name === 'localhost' ? [{ address: '127.0.0.1', family: 4 }] : []),
    ...options,
  });
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(MetadataDocumentRefused);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

/** A resolver that answers `address` for every name, and counts the questions. */
function resolverAnswering(address: string) {
  const asked: string[] = [];
  return {
    asked,
    resolve: async (name: string) => {
      asked.push(name);
      return [{ address, family: address.includes(':') ? 6 : 4 }];
    },
  };
}

describe('fetching a document', () => {
  test('an allowed host serves a valid document: it comes back as a public client registration', async () => {
    const url = `${host.origin}/client.json`;
    documents.set('/client.json', { body: doc(url) });
    const client = await fetcher().fetch(url);
    expect(client).toEqual({
      clientId: url,
      name: 'Example MCP Client',
      host: new URL(url).host,
      redirectUris: ['http://127.0.0.1/callback'],
      grantTypes: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email', 'offline_access'],
    });
  });

  test('the same localhost server is refused when localhost is not in CIMD_ALLOWED_HOSTS (loopback)', async () => {
    const url = `${host.origin}/client.json`;
    documents.set('/client.json', { body: doc(url) });
    expect(await refusal(fetcher({ allowedHosts: [] }).fetch(url))).toBe('the client_id’s host does not resolve to a public address');
    expect(host.hits.get('/client.json')).toBeUndefined();
  });
});

describe('SSRF refusals: address literals are refused before any connection', () => {
  test.each([
    ['10/8 (private)', 'https://10.0.0.7/client.json'],
    ['192.168/16 (private)', 'https://192.168.1.10/client.json'],
    ['172.16/12 (private)', 'https://172.16.5.4/client.json'],
    ['172.31.255.255 (end of 172.16/12)', 'https://172.31.255.255/client.json'],
    ['127/8 (loopback)', 'https://127.0.0.1/client.json'],
    ['127.8.9.10 (loopback, not only .1)', 'https://127.8.9.10/client.json'],
    ['::1 (IPv6 loopback)', 'https://[::1]/client.json'],
    ['169.254/16 (link-local: cloud metadata)', 'https://169.254.169.254/latest/meta-data'],
    ['fe80::/10 (IPv6 link-local)', 'https://[fe80::1]/client.json'],
    ['::ffff:127.0.0.1 (IPv6-mapped loopback)', 'https://[::ffff:127.0.0.1]/client.json'],
    ['::ffff:10.0.0.1 (IPv6-mapped private)', 'https://[::ffff:10.0.0.1]/client.json'],
    ['::127.0.0.1 (IPv4-compatible loopback, the deprecated ::/96)', 'https://[::7f00:1]/client.json'],
    ['::169.254.169.254 (IPv4-compatible link-local)', 'https://[::a9fe:a9fe]/latest/meta-data'],
  ])('%s', async (_label, url) => {
    const dns = resolverAnswering('93.184.216.34');
    expect(await refusal(fetcher({ resolve: dns.resolve }).fetch(url))).toBe('the client_id’s host does not resolve to a public address');
    expect(dns.asked).toEqual([]);
  });
});

describe('SSRF refusals: a DNS name resolving to a non-public address', () => {
  test.each([
    ['10.1.2.3', 'private'],
    ['192.168.0.2', 'private'],
    ['172.20.0.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['::1', 'IPv6 loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::abcd', 'IPv6 link-local'],
    ['::ffff:127.0.0.1', 'IPv6-mapped loopback'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
  ])('%s (%s) is refused, and nothing is connected to', async (address) => {
    const dns = resolverAnswering(address);
    const url = 'https://attacker.example/client.json';
    expect(await refusal(fetcher({ resolve: dns.resolve }).fetch(url))).toBe('the client_id’s host does not resolve to a public address');
    expect(dns.asked).toEqual(['attacker.example']);
  });

  test('an internal name and a name that does not exist get the same answer: the refusal is no oracle for internal DNS', async () => {
    const internal = await refusal(fetcher({ resolve: resolverAnswering('10.20.30.40').resolve }).fetch('https://db.corp.internal/x'));
    const missing = await refusal(
      fetcher({
        resolve: async () => {
          throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
        },
      }).fetch('https://nothing.corp.internal/x'),
    );
    expect(internal).toBe(missing);
  });

  test('a name answering one public and one private address (a rebinding setup) is refused as a whole', async () => {
    const resolve = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ];
    expect(await refusal(fetcher({ resolve }).fetch('https://rebind.example/client.json'))).toBe(
      'the client_id’s host does not resolve to a public address',
    );
  });

  test('the connection goes to the address that was vetted: an allowed name is connected to what the resolver said', async () => {
    // `docs.cimd.internal` does not exist in real DNS: the document arrives only because the connection used the
    // vetted answer (127.0.0.1, allowed through CIMD_ALLOWED_HOSTS), not a second lookup. TLS still checks the name.
    const url = `https://docs.cimd.internal:${new URL(host.origin).port}/client.json`;
    documents.set('/client.json', { body: doc(url) });
    const dns = resolverAnswering('127.0.0.1');
    expect((await fetcher({ allowedHosts: ['docs.cimd.internal'], resolve: dns.resolve }).fetch(url)).clientId).toBe(url);
    expect(dns.asked).toEqual(['docs.cimd.internal']);
    expect(host.hits.get('/client.json')).toBe(1);
    // Without the allow-list entry the same answer is refused.
    expect(await refusal(fetcher({ allowedHosts: [], resolve: dns.resolve }).fetch(url))).toBe(
      'the client_id’s host does not resolve to a public address',
    );
    expect(host.hits.get('/client.json')).toBe(1);
  });
});

describe('SSRF refusals: what the server answers', () => {
  test('a redirect is not followed', async () => {
    const url = `${host.origin}/redirect.json`;
    documents.set('/client.json', { body: doc(`${host.origin}/client.json`) });
    expect(await refusal(fetcher().fetch(url))).toBe('the metadata document URL redirects');
    expect(host.hits.get('/redirect.json')).toBe(1);
    expect(host.hits.get('/client.json')).toBeUndefined();
  });

  test('a body over the size cap (64 KB) is refused', async () => {
    const url = `${host.origin}/big.json`;
    documents.set('/big.json', { body: doc(url, { padding: 'x'.repeat(70 * 1024) }) });
    expect(await refusal(fetcher().fetch(url))).toBe('the metadata document is too large');
  });

  test('a body just under the cap is accepted', async () => {
    const url = `${host.origin}/fits.json`;
    documents.set('/fits.json', { body: doc(url, { padding: 'x'.repeat(60 * 1024) }) });
    expect((await fetcher().fetch(url)).clientId).toBe(url);
  });

  test('a slow server is given up on after the timeout', async () => {
    const url = `${host.origin}/slow.json`;
    // 2 s: the timeout covers the host check and the TLS handshake too, which a loaded machine can slow enough that no
    // request arrives; the slow server answers only after 10 s.
    const started = Date.now();
    expect(await refusal(fetcher({ timeoutMs: 2000 }).fetch(url))).toBe('the metadata document did not arrive in time');
    expect(Date.now() - started).toBeLessThan(8_000);
    // The request reached the server: the time ran out waiting for its answer.
    expect(slowHits).toBeGreaterThan(0);
  });

  test('a body that trickles in (slowloris) is given up on at the same timeout', async () => {
    const started = Date.now();
    expect(await refusal(fetcher({ timeoutMs: 400 }).fetch(`${host.origin}/trickle.json`))).toBe(
      'the metadata document did not arrive in time',
    );
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  test('the size cap counts the inflated body: a small gzip that inflates beyond 64 KB is refused', async () => {
    expect(await refusal(fetcher().fetch(`${host.origin}/gzip-bomb.json`))).toBe('the metadata document is too large');
  });

  test('an error status is refused', async () => {
    expect(await refusal(fetcher().fetch(`${host.origin}/missing.json`))).toBe('the metadata document URL answered 404');
  });

  test('a body that is not JSON is refused', async () => {
    const url = `${host.origin}/text.json`;
    documents.set('/text.json', { body: 'client_id=nope' });
    expect(await refusal(fetcher().fetch(url))).toBe('the metadata document is not JSON');
  });
});

describe('the client_id URL and the document', () => {
  test.each([
    ['http (not https)', 'http://localhost/client.json', /must be an https URL/],
    ['no path', 'https://localhost', /must have a path/],
    ['a fragment', 'https://localhost/client.json#x', /fragment/],
    ['credentials', 'https://user:pw@localhost/client.json', /credentials/],
    ['a dot segment', 'https://localhost/a/../client.json', /dot segments/],
  ])('%s: refused without a request', async (_label, url, message) => {
    const dns = resolverAnswering('127.0.0.1');
    expect(await refusal(fetcher({ resolve: dns.resolve }).fetch(url))).toMatch(message);
    expect(dns.asked).toEqual([]);
  });

  test('a document whose client_id differs from its URL is refused', async () => {
    const url = `${host.origin}/client.json`;
    documents.set('/client.json', { body: doc(`${host.origin}/other.json`) });
    expect(await refusal(fetcher().fetch(url))).toBe('invalid metadata document: the document’s client_id differs from its URL');
  });

  test('a confidential client (client_secret_basic) is refused', async () => {
    const url = `${host.origin}/client.json`;
    documents.set('/client.json', { body: doc(url, { token_endpoint_auth_method: 'client_secret_basic' }) });
    expect(await refusal(fetcher().fetch(url))).toMatch(/token_endpoint_auth_method must be none/);
  });
});

describe('the cache follows Cache-Control', () => {
  test('max-age: reused until it runs out, then fetched again', async () => {
    const clock = new ManualClock();
    const f = fetcher({ clock });
    const url = `${host.origin}/client.json`;
    documents.set('/client.json', { body: doc(url), cacheControl: 'public, max-age=60' });
    await f.fetch(url);
    await f.fetch(url);
    expect(host.hits.get('/client.json')).toBe(1);
    // The clock is real time plus an offset: 10 s under the boundary leaves room for a slow fetch.
    clock.advance(50);
    await f.fetch(url);
    expect(host.hits.get('/client.json')).toBe(1);
    clock.advance(11);
    await f.fetch(url);
    expect(host.hits.get('/client.json')).toBe(2);
  });

  test('no-store: fetched every time', async () => {
    const f = fetcher();
    const url = `${host.origin}/client.json`;
    documents.set('/client.json', { body: doc(url), cacheControl: 'no-store' });
    await f.fetch(url);
    await f.fetch(url);
    expect(host.hits.get('/client.json')).toBe(2);
    expect(f.size).toBe(0);
  });

  test('a max-age beyond 24 hours is cut to 24 hours', async () => {
    const clock = new ManualClock();
    const f = fetcher({ clock });
    const url = `${host.origin}/client.json`;
    documents.set('/client.json', { body: doc(url), cacheControl: 'max-age=31536000' });
    await f.fetch(url);
    clock.advance(24 * 3600 - 10);
    await f.fetch(url);
    expect(host.hits.get('/client.json')).toBe(1);
    clock.advance(11);
    await f.fetch(url);
    expect(host.hits.get('/client.json')).toBe(2);
  });

  test('a changed document is seen once the cached one expires', async () => {
    const clock = new ManualClock();
    const f = fetcher({ clock });
    const url = `${host.origin}/client.json`;
    documents.set('/client.json', { body: doc(url), cacheControl: 'max-age=10' });
    expect((await f.fetch(url)).name).toBe('Example MCP Client');
    documents.set('/client.json', { body: doc(url, { client_name: 'Renamed' }), cacheControl: 'max-age=10' });
    expect((await f.fetch(url)).name).toBe('Example MCP Client');
    clock.advance(11);
    expect((await f.fetch(url)).name).toBe('Renamed');
  });

  test('the cache is bounded: the least recently used document goes first', async () => {
    const f = fetcher({ maxEntries: 2 });
    for (const name of ['a', 'b', 'c']) {
      const url = `${host.origin}/${name}.json`;
      documents.set(`/${name}.json`, { body: doc(url), cacheControl: 'max-age=600' });
      await f.fetch(url);
    }
    expect(f.size).toBe(2);
    await f.fetch(`${host.origin}/c.json`);
    await f.fetch(`${host.origin}/b.json`);
    expect(host.hits.get('/c.json')).toBe(1);
    expect(host.hits.get('/b.json')).toBe(1);
    await f.fetch(`${host.origin}/a.json`);
    expect(host.hits.get('/a.json')).toBe(2);
  });

  test('an invalid document is not cached', async () => {
    const f = fetcher();
    const url = `${host.origin}/client.json`;
    documents.set('/client.json', { body: doc(`${host.origin}/x.json`), cacheControl: 'max-age=600' });
    await refusal(f.fetch(url));
    documents.set('/client.json', { body: doc(url), cacheControl: 'max-age=600' });
    expect((await f.fetch(url)).clientId).toBe(url);
  });

  test('concurrent first uses share one request', async () => {
    const f = fetcher();
    const url = `${host.origin}/client.json`;
    documents.set('/client.json', { body: doc(url), cacheControl: 'max-age=600' });
    await Promise.all([f.fetch(url), f.fetch(url), f.fetch(url)]);
    expect(host.hits.get('/client.json')).toBe(1);
  });
});
