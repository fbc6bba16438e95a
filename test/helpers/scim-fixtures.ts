import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import type { TestApp } from './test-app';

/**
 * Replays documented SCIM request examples (test/fixtures/scim/*.http, each citing its source) through the real API.
 * A replay changes only what it must: the bearer token, the media type of a body, the /scim/v2 prefix, the encoding
 * of a readable query, and the ids (and versions) the documentation's server had assigned.
 */

export interface FixtureRequest {
  name: string;
  method: string;
  target: string;
  headers: Array<[string, string]>;
  body: string;
}

/**
 * A fixture file: `#` header lines, then `### name` sections of (optional `#` comment lines,) request line, headers,
 * blank line and body.
 */
export function readFixture(file: string): Map<string, FixtureRequest> {
  const text = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'scim', file), 'utf8');
  const sections = text.split(/^### /m).slice(1);
  const out = new Map<string, FixtureRequest>();
  for (const section of sections) {
    const newline = section.indexOf('\n');
    const name = section.slice(0, newline);
    const rest = section.slice(newline + 1).replace(/^(#[^\n]*\n)+/, '');
    const blank = rest.indexOf('\n\n');
    const head = blank < 0 ? rest.replace(/\n$/, '') : rest.slice(0, blank);
    const body = blank < 0 ? '' : rest.slice(blank + 2);
    const [requestLine, ...headerLines] = head.split('\n');
    const method = requestLine!.slice(0, requestLine!.indexOf(' '));
    out.set(name, {
      name,
      method,
      // The target may hold spaces (a readable filter): everything up to the protocol, when the line names one.
      target: requestLine!
        .slice(method.length + 1)
        .replace(/ HTTP\/1\.1$/, '')
        .trim(),
      headers: headerLines.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()] as [string, string]),
      body,
    });
  }
  return out;
}

/**
 * Sends one documented request as written, with the replacements a replay needs: `ids` maps each value the
 * documentation's server had assigned (an id, a version) to this server's, in the target, the headers and the body.
 */
export function replay(t: TestApp, token: string, fixtures: Map<string, FixtureRequest>, name: string, ids: Record<string, string> = {}) {
  const fixture = fixtures.get(name);
  if (!fixture) throw new Error(`no request ${name} in the fixture`);
  const swap = (s: string) => Object.entries(ids).reduce((acc, [vendor, ours]) => acc.split(vendor).join(ours), s);
  let target = swap(fixture.target);
  if (!target.startsWith('/scim/v2/')) target = `/scim/v2${target}`;
  const [pathname, query] = target.split('?', 2);
  // A readable query (`filter=userName eq "…"`) is sent as a client sends it: each value URL-encoded.
  const encoded = query
    ?.split('&')
    .map((pair) => {
      const [key, value = ''] = pair.split(/=(.*)/s, 2);
      return /[ "]/.test(value) ? `${key}=${encodeURIComponent(value)}` : pair;
    })
    .join('&');
  const url = encoded ? `${pathname}?${encoded}` : pathname!;
  const method = fixture.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
  let req = request(t.app)[method](url);
  for (const [header, value] of fixture.headers) {
    // Host and Content-Length are the transport's own.
    if (/^(host|content-length)$/i.test(header)) continue;
    req = req.set(header, header.toLowerCase() === 'authorization' ? `Bearer ${token}` : swap(value));
  }
  req = req.set('Authorization', `Bearer ${token}`);
  if (fixture.body.trim()) return req.set('Content-Type', 'application/scim+json').send(swap(fixture.body));
  return req;
}
