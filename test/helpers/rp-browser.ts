/**
 * The browser's side towards a relying party nobody here wrote (an Express app with express-openid-connect, Apache
 * with mod_auth_openidc): its cookies for that one origin, and requests that never follow redirects, so that a test
 * sees each hop. The hops at this server go through a supertest agent (test/helpers/oidc.ts signInAndApprove).
 */
export class RpBrowser {
  private readonly cookies = new Map<string, string>();

  constructor(readonly origin: string) {}

  async go(pathOrUrl: string, init: { method?: string; form?: Record<string, string> } = {}) {
    const url = new URL(pathOrUrl, this.origin);
    if (url.origin !== this.origin) throw new Error(`${url.href} is not at ${this.origin}`);
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, location: res.headers.get('location') ?? '', text: await res.text() };
  }

  has(name: string): boolean {
    return this.cookies.has(name);
  }
}
