import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  checkOutboundUrl,
  createOutboundClient,
  createOutboundFetch,
  isPublicAddress,
  OutboundRefused,
  outboundRequest,
  type OutboundPolicy,
} from '../../src/lib/outbound-http';

let server: http.Server;
let port: number;
let hits = 0;
let connections = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits++;
    if (req.url === '/redirect') {
      res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
      return res.end();
    }
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end('x'.repeat(10_000));
    }
    if (req.url === '/slow') {
      // Cleared when the client gives up (its timeout closes the connection): no timer outlives the file.
      const answer = setTimeout(() => res.end('late'), 2_000);
      res.on('close', () => clearTimeout(answer));
      return;
    }
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, body, host: req.headers.host }));
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const strict: OutboundPolicy = { allowPrivate: false, allowHttp: true, timeoutMs: 1_000, maxBytes: 1_024 };
const open: OutboundPolicy = { ...strict, allowPrivate: true };

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(OutboundRefused);
    return (err as OutboundRefused).reason;
  }
  throw new Error('expected a refusal');
}

describe('isPublicAddress', () => {
  it.each([
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['::1', false],
    ['fe80::1', false],
    ['fc00::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['::7f00:1', false],
    ['::a9fe:a9fe', false],
    ['::808:808', false],
    ['224.0.0.1', false],
    ['8.8.8.8', true],
    ['2001:4860:4860::8888', true],
    ['::ffff:8.8.8.8', true],
    ['not-an-ip', false],
  ])('%s -> %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('outboundRequest', () => {
  it('refuses a loopback literal before connecting', async () => {
    const before = hits;
    expect(await refusal(outboundRequest(`http://127.0.0.1:${port}/`, {}, strict))).toBe('refused_address');
    expect(await refusal(outboundRequest(`http://[::1]:${port}/`, {}, strict))).toBe('refused_address');
    expect(hits).toBe(before);
  });

  it('refuses a name that resolves to loopback (localhost) and never connects', async () => {
    const before = hits;
    expect(await refusal(outboundRequest(`http://localhost:${port}/`, {}, strict))).toBe('refused_address');
    expect(hits).toBe(before);
  });

  it('refuses a name with one private answer among public ones (rebinding set-up)', async () => {
    const policy: OutboundPolicy = {
      ...strict,
      resolve: async () => [
        { address: '8.8.8.8', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
    };
    expect(await refusal(outboundRequest(`http://rebind.example:${port}/`, {}, policy))).toBe('refused_address');
  });

  it('connects to the address it vetted, not a second lookup', async () => {
    // The resolver is consulted once per connection and its answer is what the socket connects to: a name that
    // only this resolver knows reaches the local server.
    let lookups = 0;
    const policy: OutboundPolicy = {
      ...strict,
      allowedHosts: new Set(['only-here.example']),
      resolve: async () => {
        lookups++;
        return [{ address: '127.0.0.1', family: 4 }];
      },
    };
    const res = await outboundRequest(`http://only-here.example:${port}/x`, {}, policy);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString()).host).toBe(`only-here.example:${port}`);
    expect(lookups).toBe(1);
  });

  it('refuses http unless the policy allows it, and URLs with credentials', async () => {
    expect(await refusal(outboundRequest(`http://127.0.0.1:${port}/`, {}, { ...open, allowHttp: false }))).toBe('scheme');
    expect(await refusal(outboundRequest('ftp://example.com/', {}, open))).toBe('scheme');
    expect(await refusal(outboundRequest(`http://u:p@127.0.0.1:${port}/`, {}, open))).toBe('bad_url');
    expect(await refusal(outboundRequest('not a url', {}, open))).toBe('bad_url');
  });

  it('sends method, headers and body when the target is allowed', async () => {
    const res = await outboundRequest(
      `http://127.0.0.1:${port}/echo`,
      { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' },
      open,
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toMatchObject({ method: 'POST', body: 'hello' });
  });

  it('does not follow redirects', async () => {
    const res = await outboundRequest(`http://127.0.0.1:${port}/redirect`, {}, open);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://127.0.0.1:1/elsewhere');
  });

  it('caps the body size', async () => {
    expect(await refusal(outboundRequest(`http://127.0.0.1:${port}/big`, {}, open))).toBe('too_large');
  });

  it('times out', async () => {
    expect(await refusal(outboundRequest(`http://127.0.0.1:${port}/slow`, {}, { ...open, timeoutMs: 200 }))).toBe('timeout');
  });

  it('reports a connection failure as network', async () => {
    expect(await refusal(outboundRequest('http://127.0.0.1:1/', {}, open))).toBe('network');
  });

  it('checkOutboundUrl refuses link-local literals (cloud metadata)', () => {
    expect(() => checkOutboundUrl('https://169.254.169.254/latest/meta-data', strict)).toThrow(OutboundRefused);
  });
});

describe('createOutboundFetch', () => {
  it('behaves as fetch under the same policy', async () => {
    const guarded = createOutboundFetch(open);
    const res = await guarded(`http://127.0.0.1:${port}/echo`, { method: 'POST', body: new URLSearchParams({ a: '1' }) });
    expect(res.status).toBe(200);
    expect((await res.json()).body).toBe('a=1');
    await expect(createOutboundFetch(strict)(`http://localhost:${port}/`)).rejects.toBeInstanceOf(OutboundRefused);
  });
});

describe('createOutboundClient (kept-alive connections, the webhook workers)', () => {
  test('reuses a vetted connection; refuses what outboundRequest refuses', async () => {
    const client = createOutboundClient(open);
    try {
      const before = connections;
      for (let i = 0; i < 6; i++) {
        expect((await client.request(`http://127.0.0.1:${port}/x`, { method: 'POST', body: 'b' }, open)).status).toBe(200);
      }
      // (A connection goes back to the pool a moment after its answer is read: a request can still open a second.)
      expect(connections - before).toBeLessThanOrEqual(3);
      // The per-request policy still decides the scheme, timeout and size cap.
      expect(await refusal(client.request(`http://127.0.0.1:${port}/x`, {}, { ...open, allowHttp: false }))).toBe('scheme');
      expect(await refusal(client.request(`http://127.0.0.1:${port}/big`, {}, open))).toBe('too_large');
      expect((await client.request(`http://127.0.0.1:${port}/redirect`, {}, open)).status).toBe(302);
    } finally {
      await client.close();
    }
    const guarded = createOutboundClient({ ...strict, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    try {
      // The client's address rules win over a per-request policy that would allow private targets.
      expect(await refusal(guarded.request(`http://127.0.0.1:${port}/x`, {}, open))).toBe('refused_address');
      expect(await refusal(guarded.request(`http://rebind.example:${port}/x`, {}, open))).toBe('refused_address');
    } finally {
      await guarded.close();
    }
  });
});

describe('one refusal for every address problem (issue 30: SSRF refusals revealed which internal names resolve)', () => {
  async function refused(p: Promise<unknown>): Promise<OutboundRefused> {
    try {
      await p;
    } catch (err) {
      expect(err).toBeInstanceOf(OutboundRefused);
      return err as OutboundRefused;
    }
    throw new Error('expected a refusal');
  }

  it('a name that does not resolve and a name that resolves to a private address are refused alike', async () => {
    const resolve = async (host: string) => {
      if (host === 'internal.example') return [{ address: '10.1.2.3', family: 4 }];
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    };
    const policy: OutboundPolicy = { ...strict, resolve };
    const missing = await refused(outboundRequest('http://missing.example/x', {}, policy));
    const internal = await refused(outboundRequest('http://internal.example/x', {}, policy));
    const sameShape = (e: OutboundRefused) => ({ reason: e.reason, message: e.message.replace(/^\S+/, 'HOST') });
    expect(sameShape(missing)).toEqual(sameShape(internal));
    expect(missing.message).toBe('missing.example does not resolve to an address this server may call');
    // The log still knows which.
    expect(missing.internal).toMatch(/does not resolve \(ENOTFOUND\)/);
    expect(internal.internal).toMatch(/non-public address/);
  });

  it('refuseAddress refuses an address on a port even when private addresses are allowed, and never connects', async () => {
    const before = hits;
    const policy: OutboundPolicy = { ...open, refuseAddress: (address, p) => address === '127.0.0.1' && p === port };
    const viaName = await refused(
      outboundRequest(`http://self.example:${port}/`, {}, { ...policy, resolve: async () => [{ address: '127.0.0.1', family: 4 }] }),
    );
    expect(viaName.reason).toBe('refused_address');
    expect((await refused(outboundRequest(`http://127.0.0.1:${port}/`, {}, policy))).reason).toBe('refused_address');
    expect(hits).toBe(before);
    const client = createOutboundClient({ ...policy, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    try {
      expect((await refused(client.request(`http://self.example:${port}/`, {}, policy))).reason).toBe('refused_address');
      expect(hits).toBe(before);
    } finally {
      await client.close();
    }
  });
});
