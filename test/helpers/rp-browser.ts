import http from 'node:http';

/**
 * The browser's side towards a relying party nobody here wrote (an Express app with express-openid-connect, Apache
 * with mod_auth_openidc): its cookies for that one origin, and requests that never follow redirects, so that a test
 * sees each hop. The hops at this server go through a supertest agent (test/helpers/oidc.ts signInAndApprove).
 * node:http rather than fetch: fetch always says `Sec-Fetch-Mode: cors`, and mod_auth_openidc answers such requests
 * 401 instead of sending a browser to sign in.
 */
export class RpBrowser {
  private readonly cookies = new Map<string, string>();

  constructor(readonly origin: string) {}

  async go(pathOrUrl: string, init: { method?: string; form?: Record<string, string> } = {}) {
    const url = new URL(pathOrUrl, this.origin);
    if (url.origin !== this.origin) throw new Error(`${url.href} is not at ${this.origin}`);
    const body = init.form ? new URLSearchParams(init.form).toString() : undefined;
    const res = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: init.method ?? 'GET',
          headers: {
            // As a browser navigates to a page.
            accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
            'sec-fetch-mode': 'navigate',
            'sec-fetch-dest': 'document',
            cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
            ...(body ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {}),
          },
        },
        (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, headers: r.headers, text: Buffer.concat(chunks).toString('utf8') }));
          r.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    for (const line of res.headers['set-cookie'] ?? []) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, location: String(res.headers.location ?? ''), text: res.text };
  }

  has(name: string): boolean {
    return this.cookies.has(name);
  }
}
