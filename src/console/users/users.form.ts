import { z } from 'zod';
import { UUID_PATTERN } from '../../lib/ids';
import { optionalText, text } from '../action';

/** The user pages' forms: invite, the profile, the list's filter, and a role to assign. */
export const inviteForm = z.object({ email: text(300), first_name: text(300), last_name: text(300) });
export const profileForm = z.object({ first_name: text(300), last_name: text(300), email: text(300), email_verified: text(10) });
export const usersQuery = z.object({ q: text(200), status: text(20), tier: text(20), cursor: optionalText(60), before: optionalText(60) });
export const USERS_PAGE = 50;
// Keyset cursors are user ids; anything else (an edited URL) starts from the top.
const asCursor = (v: string | undefined) => (v && UUID_PATTERN.test(v) ? v : undefined);

/** The list's filter as understood (anything unknown: none), and the link to a page of it. */
export function listFilterOf(q: z.output<typeof usersQuery>) {
  const status: 'active' | 'inactive' | undefined = q.status === 'active' || q.status === 'inactive' ? q.status : undefined;
  const tier = q.tier === 'admin' ? 'admin' : '';
  const shown = { q: q.q, status: status ?? '', tier };
  const link = (extra: Record<string, string>) =>
    `/admin/users?${new URLSearchParams({ ...Object.fromEntries(Object.entries(shown).filter(([, v]) => v)), ...extra })}`;
  return { status, tier, shown, link };
}

/** The list's form as the query of GET /api/users, paged by keyset: USERS_PAGE a page, the filter as understood. */
export function listQuery(q: z.output<typeof usersQuery>) {
  const { status, tier } = listFilterOf(q);
  return {
    search: q.q.trim() || undefined,
    status,
    tier: tier || undefined,
    paging: 'cursor',
    cursor: asCursor(q.cursor),
    before: asCursor(q.before),
    limit: USERS_PAGE,
  };
}

export const roleForm = z.object({ role_id: text(100) });

/** The profile form's changes against the account as the API shows it. */
export function changes(
  f: z.output<typeof profileForm>,
  u: { first_name: string; last_name: string; email: string; email_verified: boolean },
): Record<string, unknown> {
  const verified = f.email_verified === 'true';
  return {
    ...(f.first_name !== u.first_name ? { first_name: f.first_name } : {}),
    ...(f.last_name !== u.last_name ? { last_name: f.last_name } : {}),
    ...(f.email.trim().toLowerCase() !== u.email ? { email: f.email } : {}),
    ...(verified !== u.email_verified ? { email_verified: verified } : {}),
  };
}
