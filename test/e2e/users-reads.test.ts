import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { makeClient, makeSignedInUser, makeUser, signIn } from '../helpers/factories';
import { enrolTotp } from '../helpers/mfa';
import { obtainCode } from '../helpers/oauth';
import { makeUserWithPermissions } from '../helpers/rbac';
import { createTestApp, type TestApp } from '../helpers/test-app';

/**
 * The reads about one user that the console's user page is built from: GET /api/users/:userId/sessions, /mfa, /apps,
 * /activity and /identities (users:read), and the list's keyset paging with its count (GET /api/users?paging=cursor,
 * GET /api/users/count).
 */
let t: TestApp;
let reader: string;
beforeAll(async () => {
  t = await createTestApp();
  reader = (await makeUserWithPermissions(t, ['users:read'])).bearer;
});
afterAll(async () => {
  await t.close();
});

const api = () => request(t.app);
const READS = ['sessions', 'mfa', 'apps', 'activity', 'identities'] as const;

describe("a user's page, read over REST", () => {
  test('sessions, second factors, approved apps and events about the user, people and apps by name', async () => {
    const target = await makeUser(t, { firstName: 'Grace', lastName: 'Hopper' });
    const signedIn = await signIn(t, target);
    await enrolTotp(t, signedIn.agent);
    const notes = await makeClient(t, { name: 'Notes' });
    await obtainCode(signedIn.agent, notes, { scope: 'openid email' });
    const admin = await makeSignedInUser(t, ['super_admin']);
    expect((await api().put(`/api/users/${target.id}`).set('Authorization', admin.bearer).send({ first_name: 'Amazing' })).status).toBe(
      200,
    );

    const sessions = await api().get(`/api/users/${target.id}/sessions`).set('Authorization', reader);
    expect(sessions.status).toBe(200);
    expect(sessions.headers['cache-control']).toContain('no-store');
    expect(sessions.body.sessions).toHaveLength(1);
    expect(sessions.body.sessions[0]).toMatchObject({ current: false, created_at: expect.stringMatching(/^\d{4}-/) });

    const mfa = await api().get(`/api/users/${target.id}/mfa`).set('Authorization', reader);
    expect(mfa.body).toEqual({ totp: true, passkeys: [], recovery_codes_left: 10 });

    const apps = await api().get(`/api/users/${target.id}/apps`).set('Authorization', reader);
    expect(apps.status).toBe(200);
    expect(apps.body).toEqual({
      apps: [
        {
          client_id: notes.clientId,
          name: 'Notes',
          scopes: ['openid', 'email'],
          granted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          last_used_at: null,
        },
      ],
    });

    const activity = await api().get(`/api/users/${target.id}/activity?limit=50`).set('Authorization', reader);
    expect(activity.status).toBe(200);
    const updated = activity.body.events.find((e: { type: string }) => e.type === 'user.changed');
    expect(updated).toMatchObject({
      actor_id: admin.user.id,
      actor: { type: 'user', id: admin.user.id, email: admin.user.email },
      subject_id: target.id,
      subject: { id: target.id, email: target.email, name: 'Amazing Hopper' },
    });
    expect(activity.body.events.some((e: { type: string }) => e.type === 'auth.login.succeeded')).toBe(true);
    // Only events about this user; paged on with next_cursor.
    for (const e of activity.body.events) expect([e.actor_id, e.subject_id]).toContain(target.id);
    const one = await api().get(`/api/users/${target.id}/activity?limit=1`).set('Authorization', reader);
    expect(one.body.events).toHaveLength(1);
    const next = await api().get(`/api/users/${target.id}/activity?limit=1&cursor=${one.body.next_cursor}`).set('Authorization', reader);
    expect(next.body.events[0].id).not.toBe(one.body.events[0].id);
    expect(next.body.events[0].id).toBe(activity.body.events[1].id);
  });

  test('the reads of a user with nothing yet: empty lists, no factors', async () => {
    const quiet = await makeUser(t);
    expect((await api().get(`/api/users/${quiet.id}/sessions`).set('Authorization', reader)).body).toEqual({ sessions: [] });
    expect((await api().get(`/api/users/${quiet.id}/apps`).set('Authorization', reader)).body).toEqual({ apps: [] });
    expect((await api().get(`/api/users/${quiet.id}/mfa`).set('Authorization', reader)).body).toEqual({
      totp: false,
      passkeys: [],
      recovery_codes_left: 0,
    });
  });

  test.each(READS)('GET /api/users/:userId/%s: 401 without a token, 403 without users:read, 404 unknown user, 400 bad id', async (read) => {
    const target = await makeUser(t);
    expect((await api().get(`/api/users/${target.id}/${read}`)).status).toBe(401);
    const other = await makeUserWithPermissions(t, ['users:write']);
    const refused = await api().get(`/api/users/${target.id}/${read}`).set('Authorization', other.bearer);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    const unknown = await api().get(`/api/users/${randomUUID()}/${read}`).set('Authorization', reader);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('not_found');
    const bad = await api().get(`/api/users/not-a-uuid/${read}`).set('Authorization', reader);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_error');
  });

  test('activity: a bad cursor or limit is a 400', async () => {
    const target = await makeUser(t);
    for (const q of ['cursor=%24%24', 'limit=0', 'limit=x']) {
      const res = await api().get(`/api/users/${target.id}/activity?${q}`).set('Authorization', reader);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    }
  });
});

interface Page {
  users: Array<{ email: string }>;
  total: number | null;
  page: number | null;
  next_cursor: string | null;
  prev_cursor: string | null;
}

describe('GET /api/users by keyset, and GET /api/users/count', () => {
  let tag: string;
  let emails: string[];
  beforeAll(async () => {
    tag = `ks${randomUUID().slice(0, 6)}`;
    emails = [];
    for (let i = 0; i < 5; i++) {
      const u = await makeUser(t, { email: `${tag}-${i}@example.test`, isActive: i !== 2, roles: i === 4 ? ['manager'] : [] });
      emails.unshift(u.email);
      t.clock.advance(1);
    }
  });
  const list = async (q: string) => {
    const res = await api().get(`/api/users?search=${tag}&${q}`).set('Authorization', reader);
    expect(res.status).toBe(200);
    return res.body as Page;
  };
  const emailsOf = (b: { users: Array<{ email: string }> }) => b.users.map((u) => u.email);

  test('walks forward with next_cursor and back with prev_cursor, counting nothing', async () => {
    const first = await list('paging=cursor&limit=2');
    expect(first).toMatchObject({ total: null, page: null, limit: 2, prev_cursor: null });
    expect(emailsOf(first)).toEqual(emails.slice(0, 2));
    const second = await list(`cursor=${first.next_cursor}&limit=2`);
    expect(emailsOf(second)).toEqual(emails.slice(2, 4));
    const third = await list(`cursor=${second.next_cursor}&limit=2`);
    expect(emailsOf(third)).toEqual(emails.slice(4));
    expect(third.next_cursor).toBeNull();
    const back = await list(`before=${second.prev_cursor}&limit=2`);
    expect(emailsOf(back)).toEqual(emails.slice(0, 2));
  });

  test('page numbers keep the total and also answer the cursors', async () => {
    const page = await list('page=2&limit=2');
    expect(page).toMatchObject({ total: 5, page: 2 });
    expect(emailsOf(page)).toEqual(emails.slice(2, 4));
    expect(emailsOf(await list(`cursor=${page.next_cursor}&limit=2`))).toEqual(emails.slice(4));
    expect(emailsOf(await list(`before=${page.prev_cursor}&limit=2`))).toEqual(emails.slice(0, 2));
    expect((await list('page=3&limit=2')).next_cursor).toBeNull();
  });

  test('filters by status and admin tier, in both pagings and in the count', async () => {
    expect(emailsOf(await list('status=inactive'))).toEqual([`${tag}-2@example.test`]);
    expect(emailsOf(await list('paging=cursor&tier=admin'))).toEqual([`${tag}-4@example.test`]);
    const count = async (q: string) => (await api().get(`/api/users/count?search=${tag}&${q}`).set('Authorization', reader)).body;
    expect(await count('')).toEqual({ count: { kind: 'exact', value: 5 } });
    expect(await count('status=active')).toEqual({ count: { kind: 'exact', value: 4 } });
    expect(await count('tier=admin')).toEqual({ count: { kind: 'exact', value: 1 } });
  });

  test.each(['status=gone', 'tier=owner', 'paging=offset', 'cursor=not-a-uuid', 'before=1'])('bad query %s -> 400', async (q) => {
    for (const path of ['/api/users', '/api/users/count']) {
      const res = await api().get(`${path}?${q}`).set('Authorization', reader);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
    }
  });

  test('the count needs users:read', async () => {
    expect((await api().get('/api/users/count')).status).toBe(401);
    const other = await makeUserWithPermissions(t, ['users:write']);
    expect((await api().get('/api/users/count').set('Authorization', other.bearer)).status).toBe(403);
  });
});
