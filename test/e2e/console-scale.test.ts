import { randomUUID } from 'node:crypto';
import { ServerResponse } from 'node:http';
import fc from 'fast-check';
import { countUsersCapped, searchUsers } from '../../src/db/repositories/users.repo';
import { countAuditEventsCapped, insertAuditEvents } from '../../src/db/repositories/audit-events.repo';
import * as audit from '../../src/services/audit.service';
import * as userAdmin from '../../src/services/user-admin.service';
import { grantRole, makeSignedInUser } from '../helpers/factories';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * Issue 23 "Scale": the console's lists page by keyset and count without scanning. What is checked here is what a
 * reader sees: walking the pages forwards and back never skips or repeats a row, even when every row has the same
 * timestamp; the search and filters find what they should; the counts say "about" or "more than" when they do not
 * count everything; the CSV export streams every row with safe cells. Speed is measured by `npm run bench`, not here.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

let seq = 0;
const marker = () => `scale${Date.now().toString(36)}x${(seq++).toString(36)}`;

/** Users straight into the table, created at the given instants (ties on purpose). */
async function insertUsers(tag: string, times: Date[], extra: (i: number) => Record<string, unknown> = () => ({})): Promise<void> {
  if (times.length === 0) return;
  await t.db('users').insert(
    times.map((at, i) => ({
      id: randomUUID(),
      email: `${tag}-${i}@example.test`,
      first_name: 'Scale',
      last_name: `Person ${i}`,
      password_hash: null,
      created_at: at,
      updated_at: at,
      ...extra(i),
    })),
  );
}

/** The expected order of a list: newest first, ties by id descending (uuid order is the order of its hex text). */
function expectedUserIds(rows: Array<{ id: string; created_at: Date }>): string[] {
  return [...rows]
    .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .map((r) => r.id);
}

/** Walks every page forwards, then every page back from the last one; returns both walks' pages. */
async function walkUsers(search: string, limit: number) {
  const forward: string[][] = [];
  let cursor: string | undefined;
  let page;
  do {
    page = await userAdmin.findUsers(t.ctx, { search, cursor, limit });
    forward.push(page.users.map((u) => u.user.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor && forward.length < 1000);
  const backward: string[][] = [forward[forward.length - 1]!];
  let before = page.prevCursor ?? undefined;
  while (before && backward.length < 1000) {
    const prev = await userAdmin.findUsers(t.ctx, { search, before, limit });
    backward.unshift(prev.users.map((u) => u.user.id));
    before = prev.prevCursor ?? undefined;
  }
  return { forward, backward };
}

describe('users: keyset pages', () => {
  test('forwards and back, pages never skip or repeat a user, whatever the ties of created_at (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 0, maxLength: 23 }),
        fc.integer({ min: 1, max: 6 }),
        async (offsets, limit) => {
          const tag = marker();
          const base = Date.UTC(2026, 0, 1);
          await insertUsers(
            tag,
            offsets.map((o) => new Date(base + o * 1000)),
          );
          const rows = (await t.db('users').where('email', 'like', `${tag}-%`).select('id', 'created_at')) as Array<{
            id: string;
            created_at: Date;
          }>;
          const expected = expectedUserIds(rows);
          const { forward, backward } = await walkUsers(tag, limit);
          expect(forward.flat()).toEqual(expected);
          // Every page but the last is full, and going back gives the same pages as going forwards.
          for (const p of forward.slice(0, -1)) expect(p).toHaveLength(limit);
          expect(backward).toEqual(forward);
        },
      ),
      { numRuns: 25 },
    );
  });

  test('the previous page of the second page is the first page, even when the first page was short of a page', async () => {
    const tag = marker();
    const at = new Date(Date.UTC(2026, 1, 1));
    await insertUsers(tag, Array<Date>(5).fill(at));
    const first = await userAdmin.findUsers(t.ctx, { search: tag, limit: 2 });
    expect(first.prevCursor).toBeNull();
    const second = await userAdmin.findUsers(t.ctx, { search: tag, cursor: first.nextCursor!, limit: 2 });
    const back = await userAdmin.findUsers(t.ctx, { search: tag, before: second.prevCursor!, limit: 2 });
    expect(back.users.map((u) => u.user.id)).toEqual(first.users.map((u) => u.user.id));
    expect(back.prevCursor).toBeNull();
    // A cursor that names no user gives an empty page, not an error or the whole table.
    expect(await searchUsers(t.db, { search: tag, afterId: randomUUID(), limit: 2 })).toEqual([]);
  });

  test('search: email, first name, last name, full name; case-insensitive; % and _ match literally', async () => {
    const tag = marker();
    await t.db('users').insert([
      { id: randomUUID(), email: `${tag}-mail@example.test`, first_name: 'Ottilie', last_name: 'Quast', created_at: new Date() },
      { id: randomUUID(), email: `${tag}-other@example.test`, first_name: 'Zebedee', last_name: `Snork${tag}`, created_at: new Date() },
      { id: randomUUID(), email: `${tag}-pct@example.test`, first_name: '100%', last_name: `Sure_${tag}`, created_at: new Date() },
    ]);
    const emails = async (search: string) =>
      (await userAdmin.findUsers(t.ctx, { search, limit: 50 })).users.map((u) => u.user.email.replace(`${tag}-`, '')).sort();
    expect(await emails(`${tag}-MAIL`)).toEqual(['mail@example.test']);
    expect(await emails(`snork${tag.toUpperCase()}`)).toEqual(['other@example.test']);
    expect(await emails(`Zebedee Snork${tag}`)).toEqual(['other@example.test']);
    expect(await emails(`Sure_${tag}`)).toEqual(['pct@example.test']);
    expect(await emails(`Sure%${tag}`)).toEqual([]);
    // "email first" across two fields is not a match (the index expression joins them; the exact check does not).
    expect(await emails(`example.test Ottilie`)).toEqual([]);
    // The REST API's page/offset list finds the same, with an exact total.
    const admin = await makeSignedInUser(t, ['super_admin']);
    const api = await admin.agent.get(`/api/users?search=${encodeURIComponent(`Sure_${tag}`)}`);
    expect(api.status).toBe(200);
    expect(api.body.total).toBe(1);
  });

  test('filters: status and admin tier, with keyset pages', async () => {
    const tag = marker();
    const at = new Date(Date.UTC(2026, 2, 1));
    await insertUsers(tag, Array<Date>(7).fill(at), (i) => ({ is_active: i % 2 === 0 }));
    const inactive = await userAdmin.findUsers(t.ctx, { search: tag, status: 'inactive', limit: 2 });
    const next = await userAdmin.findUsers(t.ctx, { search: tag, status: 'inactive', cursor: inactive.nextCursor!, limit: 2 });
    expect([...inactive.users, ...next.users].map((u) => u.user.isActive)).toEqual([false, false, false]);
    expect(next.nextCursor).toBeNull();
    expect(await countUsersCapped(t.db, { search: tag, status: 'active' }, 100)).toBe(4);
    const holder = (await t.db('users').where('email', `${tag}-3@example.test`).first('id')) as { id: string };
    await grantRole(t, holder.id, 'manager');
    const tier = await userAdmin.findUsers(t.ctx, { search: tag, holdingRoles: ['super_admin', 'admin', 'manager'], limit: 2 });
    expect(tier.users.map((u) => [u.user.id, u.roles.map((r) => r.name)])).toEqual([[holder.id, ['manager']]]);
    expect(tier.nextCursor).toBeNull();
    expect(await countUsersCapped(t.db, { search: tag }, 3)).toBe(4); // capped: "more than 3"
  });
});

describe('users: the console page', () => {
  test('shows an exact count for a narrow search, and Next/Previous links that walk the pages', async () => {
    const { agent } = await makeSignedInUser(t, ['super_admin']);
    const tag = marker();
    await insertUsers(tag, Array<Date>(53).fill(new Date(Date.UTC(2026, 3, 1))));
    const first = await agent.get(`/admin/users?q=${tag}`);
    expect(first.status).toBe(200);
    expect(first.text).toContain('53 users match');
    expect(first.text).not.toContain('Previous page');
    const href = (html: string, label: string) => new RegExp(`<a href="([^"]+)">${label}`).exec(html)?.[1]?.replace(/&amp;/g, '&');
    const second = await agent.get(href(first.text, 'Next page')!);
    expect(second.text.match(/<tr>/g)).toHaveLength(4); // the header and 3 users
    const back = await agent.get(href(second.text, '← Previous page')!);
    const ids = (html: string) => [...html.matchAll(/href="\/admin\/users\/([0-9a-f-]{36})"/g)].map((m) => m[1]);
    expect(ids(back.text)).toEqual(ids(first.text));
    // An edited cursor starts from the top instead of failing.
    expect((await agent.get(`/admin/users?q=${tag}&cursor=not-a-uuid`)).status).toBe(200);
  });
});

/** Events straight into the trail. */
async function insertEvents(n: number, at: (i: number) => Date, fields: (i: number) => Record<string, unknown>): Promise<void> {
  await insertAuditEvents(
    t.db,
    Array.from({ length: n }, (_, i) => ({ occurredAt: at(i), type: 'auth.login.failed', ...fields(i) })),
  );
}

describe('audit: keyset pages', () => {
  test('forwards and back with every filter shape (one type, several types, a user as actor or subject), no skip or repeat (property)', async () => {
    const types = ['auth.login.failed', 'auth.login.succeeded', 'auth.logout'] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            second: fc.integer({ min: 0, max: 2 }),
            type: fc.constantFrom(...types),
            role: fc.constantFrom('actor', 'subject', 'both', 'neither'),
          }),
          { maxLength: 25 },
        ),
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom('subject-one-type', 'subject-two-types', 'involving'),
        async (events, limit, shape) => {
          const who = marker();
          const other = marker();
          const base = Date.UTC(2026, 4, 1);
          await insertAuditEvents(
            t.db,
            events.map((e) => ({
              occurredAt: new Date(base + e.second * 1000),
              type: e.type,
              actorId: e.role === 'actor' || e.role === 'both' ? who : other,
              subjectId: e.role === 'subject' || e.role === 'both' ? who : shape === 'involving' ? other : who,
            })),
          );
          const wanted = shape === 'subject-one-type' ? ['auth.login.failed'] : ['auth.login.failed', 'auth.logout'];
          const rows = (await t
            .db('audit_events')
            .where((w) =>
              shape === 'involving'
                ? w.where('actor_id', who).orWhere('subject_id', who)
                : w.where('subject_id', who).whereIn('type', wanted),
            )
            .orderBy([
              { column: 'occurred_at', order: 'desc' },
              { column: 'id', order: 'desc' },
            ])
            .select('id')) as Array<{ id: string | number }>;
          const expected = rows.map((r) => String(r.id));

          // A user's own activity (actor or subject: two branches, a row in both only once) pages forwards only.
          const fetch = (cursors: { cursor?: string }) =>
            shape === 'involving'
              ? audit.listOwnActivity(t.ctx, who, { ...cursors, limit })
              : audit.searchAuditEvents(t.ctx, { subject: who, types: wanted, ...cursors, limit });
          const forward: string[][] = [];
          let page = await fetch({});
          forward.push(page.events.map((e) => e.id));
          while (page.nextCursor && forward.length < 100) {
            page = await fetch({ cursor: page.nextCursor });
            forward.push(page.events.map((e) => e.id));
          }
          expect(forward.flat()).toEqual(expected);
          for (const p of forward.slice(0, -1)) expect(p).toHaveLength(limit);
          if (shape !== 'involving') {
            const backward: string[][] = [forward[forward.length - 1]!];
            let before = page.prevCursor;
            while (before && backward.length < 100) {
              const prev = await audit.searchAuditEvents(t.ctx, { subject: who, types: wanted, before, limit });
              backward.unshift(prev.events.map((e) => e.id));
              before = prev.prevCursor;
            }
            expect(backward).toEqual(forward);
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  test('date range: from inclusive, to exclusive, with pages', async () => {
    const who = marker();
    const day = (d: number) => new Date(Date.UTC(2026, 5, d, 12));
    await insertEvents(
      6,
      (i) => day(1 + i),
      () => ({ subjectId: who }),
    );
    const page1 = await audit.searchAuditEvents(t.ctx, { subject: who, from: day(2), to: day(5), limit: 2 });
    const page2 = await audit.searchAuditEvents(t.ctx, { subject: who, from: day(2), to: day(5), cursor: page1.nextCursor!, limit: 2 });
    expect([...page1.events, ...page2.events].map((e) => e.occurredAt.toISOString())).toEqual(
      [day(4), day(3), day(2)].map((d) => d.toISOString()),
    );
    expect(page2.nextCursor).toBeNull();
  });

  test('a cursor that is not one the server gave out is a 400 in the API, and the console page says so', async () => {
    const { agent } = await makeSignedInUser(t, ['super_admin']);
    const api = await agent.get('/api/admin/audit-events?cursor=bm90LWFuLWlk');
    expect(api.status).toBe(400);
    const page = await agent.get('/admin/audit?before=bm90LWFuLWlk');
    expect(page.status).toBe(400);
  });
});

describe('audit: counts and CSV at size', () => {
  const who = `scale-bulk-${Date.now().toString(36)}`;
  const N = 10_001;

  beforeAll(async () => {
    // 10,001 events of one subject in one statement, as generate_series makes them; every 1000th with cells a
    // spreadsheet would run as a formula, or that need quoting.
    await t.db.raw(
      `insert into audit_events (occurred_at, type, actor_id, subject_id, user_agent, detail)
       select timestamptz '2026-07-01' + make_interval(secs => g / 3), 'auth.login.failed',
              case when g % 1000 = 0 then '=HYPERLINK("http://evil.example")' else null end, ?,
              case when g % 1000 = 1 then E'Agent, "quoted"\\nline' else 'Agent' end,
              jsonb_build_object('n', g)
         from generate_series(1, ?) g`,
      [who, N],
    );
    await t.db.raw('analyze audit_events');
  });

  test('filtered counts stop at the cap: "More than 10,000 events match"; a narrow filter is exact', async () => {
    expect(await countAuditEventsCapped(t.db, { subjectId: who }, 10_000)).toBe(10_001);
    expect(await countAuditEventsCapped(t.db, { subjectId: who, types: ['auth.login.failed', 'auth.logout'] }, 50)).toBe(51);
    const { agent } = await makeSignedInUser(t, ['super_admin']);
    const many = await agent.get(`/admin/audit?subject=${who}`);
    expect(many.status).toBe(200);
    expect(many.text).toContain('More than 10,000 events match');
    const narrow = await agent.get(`/admin/audit?subject=${who}&actor=${encodeURIComponent('=HYPERLINK("http://evil.example")')}`);
    expect(narrow.text).toContain('10 events match');
    const one = await agent.get(
      `/admin/audit?subject=${who}&actor=${encodeURIComponent('=HYPERLINK("http://evil.example")')}&to=2026-06-30`,
    );
    expect(one.text).not.toContain('events match');
    expect(one.text).toContain('No events.'); // the empty state, no count line
  });

  test('unfiltered, the page gives the table estimate: "About N events"', async () => {
    const { agent } = await makeSignedInUser(t, ['super_admin']);
    const page = await agent.get('/admin/audit');
    const estimate = Number(
      (
        (await t.db.raw(`select reltuples::bigint as n from pg_class where oid = 'audit_events'::regclass`)) as {
          rows: Array<{ n: string }>;
        }
      ).rows[0]!.n,
    );
    expect(estimate).toBeGreaterThan(10_000);
    expect(page.text).toContain(`About ${estimate.toLocaleString('en-US')} events`);
  });

  test('the CSV export streams every filtered row (beyond one batch), newest first, cells quoted and formulas neutralised', async () => {
    const { agent } = await makeSignedInUser(t, ['super_admin']);
    // A long export waits for the socket to drain many times; no listener may be left behind each time (an operator
    // would see MaxListenersExceededWarning in the log): the response ends with the few 'close' listeners it started with.
    let closeListenersAtEnd = 0;
    const end = ServerResponse.prototype.end;
    ServerResponse.prototype.end = function (this: ServerResponse, ...args: Parameters<typeof end>) {
      if (String(this.getHeader('content-type')).startsWith('text/csv')) closeListenersAtEnd = this.listenerCount('close');
      return end.apply(this, args);
    } as typeof end;
    const res = await agent
      .get(`/admin/audit.csv?subject=${who}`)
      .buffer(true)
      .parse((r, cb) => {
        let body = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (body += c));
        r.on('end', () => cb(null, body));
      })
      .then(
        (r) => ((ServerResponse.prototype.end = end), r),
        (e: unknown) => {
          ServerResponse.prototype.end = end;
          throw e;
        },
      );
    expect(closeListenersAtEnd).toBeGreaterThan(0);
    expect(closeListenersAtEnd).toBeLessThan(5);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['content-length']).toBeUndefined();
    const rows = parseCsv(res.body as string);
    expect(rows[0]).toEqual([
      'id',
      'occurred_at',
      'type',
      'actor_name',
      'actor_email',
      'actor_id',
      'subject_name',
      'subject_email',
      'subject_id',
      'application',
      'client_id',
      'ip',
      'user_agent',
      'request_id',
      'detail',
      'detail_json',
    ]);
    const data = rows.slice(1);
    expect(data).toHaveLength(N);
    const ns = data.map((r) => (JSON.parse(r[15]!) as { n: number }).n);
    expect(new Set(ns).size).toBe(N);
    // Newest first: g / 3 seconds after midnight, ties broken by id descending, so n only goes down.
    expect(ns).toEqual([...ns].sort((a, b) => b - a));
    const formula = data.find((r) => r[5]?.includes('HYPERLINK'))!;
    expect(formula[5]).toBe(`'=HYPERLINK("http://evil.example")`);
    expect(data.find((r) => r[12] !== 'Agent')![12]).toBe('Agent, "quoted"\nline');
  });
});

/** RFC 4180: quoted fields may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  if (cell || row.length) rows.push([...row, cell]);
  return rows;
}
