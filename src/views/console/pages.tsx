import type { ComponentChildren } from 'preact';
import type { ApiResource, BackchannelDelivery, OAuthClient, SigningKey, Summary } from '../../wire/admin/admin.schemas';
import type { AuditEvent } from '../../wire/audit/audit.schemas';
import type { Role } from '../../wire/rbac/rbac.schemas';
import type { ConnectedApp, UserDetail, UserFactors, UserIdentity, UserSession, UserSummary } from '../../wire/users/users.schemas';
import type { ListCount } from '../../declarations/list-count';
import { messagesFor } from '../../i18n';
import { pageEnv } from '../env';
import { Actions, formatTime, Submit, Time } from '../kit';
import {
  ActionButton,
  Badge,
  bindForm,
  Checkbox,
  Checkboxes,
  CopyValue,
  CountLine,
  Facts,
  FilterForm,
  Field,
  Pagination,
  PostForm,
  Radios,
  RefusalText,
  Select,
  Table,
  TextArea,
  type FieldErrors,
} from './components';
import { renderConsole, type ConsoleFrame } from './layout';
import { BackLink, CreateButton, NoneYet } from './list';
import { SignInChart, type SignInDay } from './chart';
import { PRESETS, presetOf, type ClientPreset } from '../../declarations/client-presets';
import { GetStarted, presetName, QuickStart, type QuickStartData } from './quick-start';

/**
 * The user pages render what the users API answers (GET /api/users, /api/users/:userId and its sessions, mfa, apps,
 * activity and identities): wire shapes, never a database row or a service type (docs/architecture.md, "Layers").
 */
type RoleRef = UserSummary['roles'][number];

/** The console's catalogue in the page's language (CONTRACT §15). */
const c = () => pageEnv().t.console;
const dash = (v: string | null | undefined) => (v ? v : '—');
const yesNo = (v: boolean) => (v ? c().common.yes : c().common.no);
/** A count in the page's language (Intl.NumberFormat: 1,234 / 1.234). */
const count = (n: number) => new Intl.NumberFormat(pageEnv().locale).format(n);
const fullName = (u: { first_name: string; last_name: string }) => `${u.first_name} ${u.last_name}`.trim();
const roleLabel = (r: Pick<RoleRef, 'name' | 'application'>) => (r.application ? `${r.name} (${r.application})` : r.name);

export function renderOverview(frame: ConsoleFrame, data: { summary: Summary; days: SignInDay[] }): string {
  const s = data.summary;
  const o = c().overview;
  const cards: Array<[string, number, string]> = [
    [o.users, s.users, '/admin/users'],
    [o.activeUsers, s.active_users, '/admin/users?status=active'],
    [o.admins, s.admins, '/admin/users?tier=admin'],
    [o.applications, s.clients, '/admin/applications'],
    [o.activeApplications, s.active_clients, '/admin/applications'],
    [o.roles, s.roles, '/admin/roles'],
  ];
  return renderConsole(
    frame,
    <>
      <h1>{o.title}</h1>
      {s.clients === 0 ? <GetStarted people={s.users > 1} /> : null}
      <ul class="cards">
        {cards.map(([label, n, href]) => (
          <li>
            <a href={href}>
              <span class="n">{count(n)}</span>
              {label}
            </a>
          </li>
        ))}
      </ul>
      <h2 id="chart-h">{o.chartHeading}</h2>
      <SignInChart days={data.days} labelledBy="chart-h" />
      <details>
        <summary>{o.asTable}</summary>
        <Table
          caption={o.tableCaption}
          rows={[...data.days].reverse()}
          empty={o.noSignIns}
          columns={[
            { label: o.day, cell: (d) => d.day },
            { label: o.signIns, cell: (d) => count(d.succeeded) },
            { label: o.failedSignIns, cell: (d) => count(d.failed) },
          ]}
        />
      </details>
    </>,
  );
}

export interface UsersFilter {
  q: string;
  status: string;
  tier: string;
}

export function renderUsers(
  frame: ConsoleFrame,
  data: {
    users: UserSummary[];
    count: ListCount;
    filter: UsersFilter;
    prev?: string;
    next?: string;
  },
): string {
  const { users: u, common: k } = c();
  const filtered = Boolean(data.filter.q || data.filter.status || data.filter.tier);
  return renderConsole(
    frame,
    <>
      <h1>{u.title}</h1>
      <CreateButton href="/admin/users/new" label={u.invite}>
        {' '}
        <a href="/admin/users/import">{u.importExport}</a>
      </CreateButton>
      <FilterForm action="/admin/users" label={u.filtersLabel} button={u.searchButton}>
        <Field name="q" type="search" label={u.search} value={data.filter.q} />
        <Select
          name="status"
          label={k.status}
          value={data.filter.status}
          options={[
            { value: '', label: u.any },
            { value: 'active', label: k.active },
            { value: 'inactive', label: k.inactive },
          ]}
        />
        <Select
          name="tier"
          label={u.role}
          value={data.filter.tier}
          options={[
            { value: '', label: u.anyone },
            { value: 'admin', label: u.adminTier },
          ]}
        />
      </FilterForm>
      {data.users.length ? <CountLine count={data.count} what="users" filtered={filtered} /> : null}
      <Table
        caption={u.caption}
        rows={data.users}
        empty={filtered ? u.noMatch : <NoneYet text={u.noneYet} href="/admin/users/new" link={u.inviteOne} />}
        columns={[
          { label: k.email, wrap: true, cell: (user) => <a href={`/admin/users/${user.id}`}>{user.email}</a> },
          { label: k.name, cell: (user) => dash(fullName(user)) },
          { label: u.roles, cell: ({ roles }) => (roles.length ? roles.map(roleLabel).join(', ') : '—') },
          { label: k.status, cell: (user) => <UserStatus user={user} /> },
          { label: u.verified, cell: (user) => yesNo(user.email_verified) },
          { label: u.lastSignIn, cell: (user) => (user.last_login_at ? <Time at={user.last_login_at} /> : k.never) },
        ]}
      />
      <Pagination prev={data.prev} next={data.next} label={u.pagesLabel} />
    </>,
  );
}

export function renderInviteUser(frame: ConsoleFrame, data: { values: Record<string, string>; errors: FieldErrors }): string {
  const bound = bindForm(data.values, data.errors);
  const { users: u, common: k } = c();
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/users" label={u.back} heading={u.invite} />
      <p>{u.inviteIntro}</p>
      <PostForm action="/admin/users" csrf={frame.csrf}>
        <Field {...bound('email')} type="email" label={k.email} required autocomplete="off" />
        <Field {...bound('first_name')} label={k.firstName} required />
        <Field {...bound('last_name')} label={k.lastName} required />
        <Submit label={u.sendInvitation} />
      </PostForm>
    </>,
  );
}

export interface UserDetailData {
  user: UserDetail;
  /** The roles that may be assigned (GET /api/users/roles/assignable); none for whoever may not assign roles. */
  allRoles: Role[];
  sessions: UserSession[];
  apps: ConnectedApp[];
  factors: UserFactors;
  events: AuditEvent[];
  /** Identities at other providers; one flagged at the upgrade (`needs_confirmation`) is shown as paused. */
  identities: UserIdentity[];
  errors: FieldErrors;
  values?: Record<string, string>;
  isSelf: boolean;
}

/** Invited (no password set yet), Active or Inactive (docs/rbac.md, "Invitations"). */
function UserStatus(props: { user: Pick<UserSummary, 'status'> }) {
  const k = c().common;
  const { status } = props.user;
  return status === 'invited' ? (
    <span class="badge invited">{k.invited}</span>
  ) : (
    <Badge on={status === 'active'} yes={k.active} no={k.inactive} />
  );
}

export function renderUserDetail(frame: ConsoleFrame, d: UserDetailData): string {
  const u = d.user;
  const base = `/admin/users/${u.id}`;
  const v = d.values ?? {};
  const bound = bindForm(v, d.errors);
  const assignable = d.allRoles.filter((r) => r.is_active && !u.roles.some((held) => held.id === r.id));
  const invitationExpiresAt = u.status === 'invited' ? u.invitation_expires_at : null;
  const { user: x, users: us, common: k } = c();
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/users" label={us.back} heading={fullName(u) || u.email} />
      <Facts
        items={[
          [k.email, u.email],
          [k.status, <UserStatus user={u} />],
          ...(invitationExpiresAt
            ? [
                [
                  x.invitationUntil,
                  <>
                    <Time at={invitationExpiresAt} />
                    {Date.parse(invitationExpiresAt) <= Date.now() ? <p class="field-error">{x.invitationExpired}</p> : null}
                  </>,
                ] as [string, ComponentChildren],
              ]
            : []),
          [x.emailVerified, yesNo(u.email_verified)],
          [k.created, <Time at={u.created_at} />],
          [us.lastSignIn, u.last_login_at ? <Time at={u.last_login_at} /> : k.never],
          [x.userId, <code>{u.id}</code>],
        ]}
      />
      {d.identities
        .filter((i) => i.needs_confirmation)
        .map((i) => (
          <p class="error">{x.pausedIdentity(i.provider.name, i.email ?? '')}</p>
        ))}
      <div class="actions">
        {u.is_active ? (
          <ActionButton action={`${base}/deactivate`} csrf={frame.csrf} label={x.deactivate} danger />
        ) : (
          <ActionButton action={`${base}/activate`} csrf={frame.csrf} label={x.reactivate} />
        )}
        {invitationExpiresAt ? (
          <ActionButton action={`${base}/invitation`} csrf={frame.csrf} label={x.resendInvitation} />
        ) : (
          <ActionButton action={`${base}/password-link`} csrf={frame.csrf} label={x.sendPasswordLink} />
        )}
      </div>

      <section class="panel" aria-labelledby="profile-h">
        <h2 id="profile-h">{x.profile}</h2>
        <PostForm action={`${base}/profile`} csrf={frame.csrf}>
          <Field name="first_name" label={k.firstName} value={v.first_name ?? u.first_name} errors={d.errors} />
          <Field name="last_name" label={k.lastName} value={v.last_name ?? u.last_name} errors={d.errors} />
          <Field name="email" type="email" label={k.email} value={v.email ?? u.email} errors={d.errors} autocomplete="off" />
          <div class="check">
            <input type="checkbox" id="f-email_verified" name="email_verified" value="true" checked={u.email_verified} />
            <label for="f-email_verified">{x.addressVerified}</label>
          </div>
          <Submit label={x.saveProfile} />
        </PostForm>
      </section>

      <section class="panel" aria-labelledby="roles-h">
        <h2 id="roles-h">{x.roles}</h2>
        <Table
          caption={x.rolesHeld}
          rows={u.roles}
          empty={x.noRoles}
          columns={[
            { label: us.role, cell: (r) => <a href={`/admin/roles/${r.id}`}>{r.name}</a> },
            { label: k.application, cell: (r) => r.application ?? k.global },
            {
              label: k.action,
              cell: (r) => (
                <ActionButton
                  action={`${base}/roles/${r.id}/remove`}
                  csrf={frame.csrf}
                  label={k.remove}
                  danger
                  ariaLabel={x.removeRole(roleLabel(r))}
                />
              ),
            },
          ]}
        />
        {assignable.length ? (
          <PostForm action={`${base}/roles`} csrf={frame.csrf} class="filters">
            <Select
              {...bound('role_id')}
              label={x.roleToAssign}
              placeholder={x.chooseRole}
              required
              options={assignable.map((r) => ({ value: r.id, label: roleLabel(r) }))}
            />
            <div>
              <button type="submit">{x.assignRole}</button>
            </div>
          </PostForm>
        ) : null}
      </section>

      <section class="panel" aria-labelledby="sessions-h">
        <h2 id="sessions-h">{x.sessions}</h2>
        <Table
          caption={x.activeSessions}
          rows={d.sessions}
          empty={x.noSessions}
          columns={[
            { label: x.started, cell: (s) => <Time at={s.created_at} /> },
            { label: x.lastUsed, cell: (s) => <Time at={s.last_used_at} /> },
            { label: x.app, cell: (s) => dash(s.client_id) },
            { label: x.ipAddress, cell: (s) => dash(s.ip) },
            { label: x.browser, wrap: true, cell: (s) => dash(s.user_agent) },
            {
              label: k.action,
              cell: (s) => (
                <ActionButton
                  action={`${base}/sessions/${s.id}/revoke`}
                  csrf={frame.csrf}
                  label={k.revoke}
                  danger
                  ariaLabel={x.revokeSession(formatTime(new Date(s.created_at)))}
                />
              ),
            },
          ]}
        />
      </section>

      <section class="panel" aria-labelledby="apps-h">
        <h2 id="apps-h">{x.connectedApps}</h2>
        <Table
          caption={x.approvedApps}
          rows={d.apps}
          empty={x.noApps}
          columns={[
            { label: k.application, cell: (a) => <a href={`/admin/applications/${encodeURIComponent(a.client_id)}`}>{a.name}</a> },
            { label: x.scopes, cell: (a) => a.scopes.join(' ') },
            { label: x.granted, cell: (a) => <Time at={a.granted_at} /> },
          ]}
        />
      </section>

      <section class="panel" aria-labelledby="factors-h">
        <h2 id="factors-h">{x.secondFactors}</h2>
        <Facts
          items={[
            [x.authenticatorApp, d.factors.totp ? k.on : k.off],
            [x.passkeys, d.factors.passkeys.length ? d.factors.passkeys.map((p) => p.name).join(', ') : k.none],
            [x.recoveryCodesLeft, count(d.factors.recovery_codes_left)],
          ]}
        />
        {d.isSelf ? (
          <p class="muted">
            {x.ownFactorsBefore} <a href="/account#second-factors">{x.ownFactorsLink}</a>.
          </p>
        ) : d.factors.totp || d.factors.passkeys.length || d.factors.recovery_codes_left ? (
          <ActionButton action={`${base}/mfa/reset`} csrf={frame.csrf} label={x.resetFactors} danger />
        ) : null}
      </section>

      <section class="panel" aria-labelledby="events-h">
        <h2 id="events-h">{x.recentEvents}</h2>
        <AuditTable events={d.events} caption={x.eventsCaption} />
        <p>
          <a href={`/admin/audit?subject=${u.id}`}>{x.allEvents}</a>
        </p>
      </section>
    </>,
  );
}

/** A person of the trail: name and email as recorded, linking to the account, the id in a tooltip. */
function Person(props: { id: string; email: string | null; name: string | null }) {
  const a = c().audit;
  return (
    <a href={`/admin/users/${props.id}`} title={a.idTitle(props.id)}>
      {props.name ? (
        <>
          {props.name}
          <br />
          <span class="muted">{props.email ?? props.id}</span>
        </>
      ) : (
        (props.email ?? props.id)
      )}
    </a>
  );
}

function Actor(props: { e: AuditEvent }) {
  const { actor } = props.e;
  const a = c().audit;
  if (!actor) return <span class="muted">{a.system}</span>;
  if (actor.type === 'scim_connection') return <span title={a.idTitle(actor.id)}>{a.scimConnection(actor.name)}</span>;
  return <Person id={actor.id} email={actor.email} name={actor.name} />;
}

function Subject(props: { e: AuditEvent }) {
  const { subject, subject_id: id } = props.e;
  if (subject) return <Person id={subject.id} email={subject.email} name={subject.name} />;
  return id ? <code>{id}</code> : <>—</>;
}

function Application(props: { e: AuditEvent }) {
  const { client } = props.e;
  if (!client) return <>—</>;
  const a = c().audit;
  return client.name !== null ? (
    <a href={`/admin/applications/${encodeURIComponent(client.client_id)}`} title={a.idTitle(client.client_id)}>
      {client.name}
    </a>
  ) : (
    <span title={a.idTitle(client.client_id)}>
      <code>{client.client_id}</code> <span class="muted">({a.goneApplication})</span>
    </span>
  );
}

/** A detail value as text: lists joined, booleans in words, nested objects as `key: value` pairs. */
function detailText(v: unknown): string {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'boolean') return yesNo(v);
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  if (Array.isArray(v)) return v.length ? v.map(detailText).join(', ') : '—';
  if (typeof v === 'object')
    return (
      Object.entries(v)
        .sort(([a], [b]) => fieldRank(a) - fieldRank(b))
        .map(([k, x]) => `${detailLabel(k)}: ${detailText(x)}`)
        .join('; ') || '—'
    );
  return JSON.stringify(v);
}

const detailLabel = (key: string) => c().audit.details[key] ?? key;

/**
 * A recorded change reads in its own order (what, before, after) whatever order PostgreSQL's jsonb keeps its keys in
 * (shorter keys first: `after` before `before`); other fields keep theirs.
 */
const LEADING_FIELDS = ['name', 'before', 'after'];
const fieldRank = (key: string) => (LEADING_FIELDS.includes(key) ? LEADING_FIELDS.indexOf(key) : LEADING_FIELDS.length);

/** An event's detail as one line of labelled fields, as the audit log shows it (the CSV export's `detail`). */
export const auditDetailLine = (detail: Record<string, unknown>): string => (Object.keys(detail).length === 0 ? '' : detailText(detail));

/** An event's detail as labelled fields (translated labels; values as recorded). */
function Detail(props: { detail: Record<string, unknown> }) {
  const entries = Object.entries(props.detail);
  if (entries.length === 0) return <>—</>;
  return (
    <dl class="detail">
      {entries.map(([k, v]) => (
        <>
          <dt>{detailLabel(k)}</dt>
          <dd>{detailText(v)}</dd>
        </>
      ))}
    </dl>
  );
}

function AuditTable(props: { events: AuditEvent[]; caption: string }) {
  const a = c().audit;
  return (
    <Table
      caption={props.caption}
      rows={props.events}
      empty={a.none}
      columns={[
        { label: a.when, cell: (e) => <Time at={e.occurred_at} /> },
        { label: a.type, cell: (e) => <code class="type">{e.type}</code> },
        { label: a.actorColumn, wrap: true, cell: (e) => <Actor e={e} /> },
        { label: a.subjectColumn, wrap: true, cell: (e) => <Subject e={e} /> },
        { label: a.app, wrap: true, cell: (e) => <Application e={e} /> },
        { label: a.ip, cell: (e) => dash(e.ip) },
        { label: a.detail, wrap: true, cell: (e) => <Detail detail={e.detail} /> },
      ]}
    />
  );
}

export function renderRoles(frame: ConsoleFrame, data: { roles: Role[]; canEdit: boolean }): string {
  const { roles: ro, common: k } = c();
  return renderConsole(
    frame,
    <>
      <h1>{ro.title}</h1>
      {data.canEdit ? <CreateButton href="/admin/roles/new" label={ro.create} /> : <p class="muted">{ro.superAdminOnly}</p>}
      <Table
        caption={ro.caption}
        rows={data.roles}
        empty={
          <>
            {ro.noneYet} {data.canEdit ? <a href="/admin/roles/new">{ro.createOne}</a> : ro.superAdminCan}.
          </>
        }
        columns={[
          { label: k.name, cell: (r) => <a href={`/admin/roles/${r.id}`}>{r.name}</a> },
          { label: k.application, cell: (r) => r.application ?? k.global },
          { label: ro.permissions, cell: (r) => count(r.permissions.length) },
          { label: k.status, cell: (r) => <Badge on={r.is_active} yes={k.active} no={k.deactivated} /> },
          { label: k.description, cell: (r) => dash(roleDescription(r)) },
        ]}
      />
    </>,
  );
}

/** The role form's fields as typed (mapped onto the API body in src/console/roles). */
export interface RoleValues {
  name: string;
  description: string;
  application: string;
  permissions: string[];
  /** Checked `<resource identifier> <scope>` pairs. */
  api_scopes: string[];
}

/** A permission's description in the page's language (the catalogue's, else the API's English one). */
export const permissionDescription = (p: { name: string; description: string }) =>
  c().roles.permissionDescriptions[p.name] ?? p.description;

/** A role's description; a built-in role's seeded text is shown in the page's language. */
export function roleDescription(r: { name: string; application: string | null; description: string }): string {
  const ro = c().roles;
  const builtIn = r.application === null ? messagesFor('en').console.roles.builtInDescriptions[r.name] : undefined;
  return builtIn !== undefined && builtIn === r.description ? (ro.builtInDescriptions[r.name] ?? r.description) : r.description;
}

export function renderRoleForm(
  frame: ConsoleFrame,
  data: {
    role?: Role;
    permissions: Array<{ name: string; description: string }>;
    /** The registered applications (GET /api/admin/oauth-clients): a role's application is chosen from them. */
    applications: ReadonlyArray<Pick<OAuthClient, 'client_id' | 'name'>>;
    resources: readonly ApiResource[];
    values: RoleValues;
    errors: FieldErrors;
    canEdit: boolean;
  },
): string {
  const r = data.role;
  const v = data.values;
  const bound = bindForm(v, data.errors);
  const { roles: ro, common: k } = c();
  // A role stored earlier with a free-text application that names no registered client: shown, and fixable.
  const stray = r?.application && !data.applications.some((a) => a.client_id === r.application) ? r.application : undefined;
  const appOptions = [
    ...(r ? [] : [{ value: '', label: ro.applicationGlobal }]),
    ...(stray ? [{ value: stray, label: ro.unknownApplication(stray) }] : []),
    ...data.applications.map((a) => ({ value: a.client_id, label: ro.applicationLabel(a.name, a.client_id) })),
  ];
  const description = r ? roleDescription(r) : v.description;
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/roles" label={ro.back} heading={r ? ro.heading(roleLabel(r)) : ro.create} />
      {r ? (
        <Facts
          items={[
            [k.status, <Badge on={r.is_active} yes={k.active} no={k.deactivated} />],
            [k.application, r.application ?? k.global],
            [k.description, dash(description)],
            [ro.roleId, <code>{r.id}</code>],
          ]}
        />
      ) : null}
      {stray && data.canEdit ? (
        <p class="error" role="note">
          {ro.unknownApplicationText(stray)}
        </p>
      ) : null}
      {data.canEdit ? (
        <PostForm action={r ? `/admin/roles/${r.id}` : '/admin/roles'} csrf={frame.csrf}>
          <Field {...bound('name')} label={k.name} required hint={ro.nameHint} />
          <Field {...bound('description')} label={k.description} />
          {r && r.application === null ? null : (
            <Select {...bound('application')} label={ro.applicationField} options={appOptions} hint={ro.applicationHint} />
          )}
          <Checkboxes
            name="permissions"
            legend={ro.permissions}
            options={data.permissions.map((p) => ({ value: p.name, label: `${p.name} — ${permissionDescription(p)}` }))}
            checked={v.permissions}
            errors={data.errors}
          />
          <fieldset aria-describedby="f-api_scopes-hint">
            <legend>{ro.apiScopes}</legend>
            <p class="hint" id="f-api_scopes-hint">
              {ro.apiScopesHint}
            </p>
            {data.errors.api_scopes ? (
              <p class="field-error" id="f-api_scopes-error">
                {data.errors.api_scopes}
              </p>
            ) : null}
            {data.resources.length === 0 ? <p class="muted">{ro.noApiResources}</p> : null}
            {data.resources.map((res, i) => (
              <Checkboxes
                name="api_scopes"
                idPrefix={`f-api_scopes-${i}`}
                legend={ro.apiResource(res.name, res.identifier, res.role_based_access)}
                options={res.scopes.map((sc) => ({ value: `${res.identifier} ${sc}`, label: sc }))}
                checked={v.api_scopes}
              />
            ))}
          </fieldset>
          <Submit label={r ? ro.save : ro.createButton} />
        </PostForm>
      ) : (
        <>
          <p>{ro.permissionsList(v.permissions.join(', ') || ro.noPermissions)}</p>
          <p>{ro.apiScopesList(v.api_scopes.join(', ') || ro.noApiScopes)}</p>
        </>
      )}
      {r && data.canEdit && r.is_active ? (
        <Actions>
          <ActionButton action={`/admin/roles/${r.id}/deactivate`} csrf={frame.csrf} label={ro.deactivate} danger />
        </Actions>
      ) : null}
    </>,
  );
}

/** A client as the console shows it; `registration` says how it came to exist (CONTRACT §13). */
export type ConsoleClient = OAuthClient;

const clientTypeLabel = (type: string) => {
  const ap = c().applications;
  return type === 'confidential' ? ap.confidential : type === 'public' ? ap.public : type;
};

/** The grant types of CONTRACT §12 as the form offers them, in the page's language. */
export function grantTypeOptions(): Array<{ value: string; label: string }> {
  const ap = c().applications;
  return [
    { value: 'authorization_code', label: ap.grantAuthorizationCode },
    { value: 'refresh_token', label: ap.grantRefreshToken },
    { value: 'client_credentials', label: ap.grantClientCredentials },
    { value: 'urn:ietf:params:oauth:grant-type:device_code', label: ap.grantDeviceCode },
    { value: 'urn:ietf:params:oauth:grant-type:token-exchange', label: ap.grantTokenExchange },
  ];
}

const grantLabel = (g: string) => g.replace(/^urn:ietf:params:oauth:grant-type:/, '');

export function renderApplications(frame: ConsoleFrame, data: { clients: ConsoleClient[]; canWrite: boolean }): string {
  const { applications: ap, common: k } = c();
  return renderConsole(
    frame,
    <>
      <h1>{ap.title}</h1>
      {data.canWrite ? <CreateButton href="/admin/applications/new" label={ap.create} /> : null}
      <Table
        caption={ap.caption}
        rows={data.clients}
        empty={data.canWrite ? <NoneYet text={ap.noneYet} href="/admin/applications/new" link={ap.createOne} /> : ap.noneYetPlain}
        columns={[
          { label: k.name, cell: (c) => <a href={`/admin/applications/${encodeURIComponent(c.client_id)}`}>{c.name}</a> },
          { label: ap.clientId, wrap: true, cell: (c) => <code>{c.client_id}</code> },
          {
            label: ap.type,
            cell: (c) => (
              <>
                {clientTypeLabel(c.type)}
                {c.registration === 'dynamic' ? <span class="muted"> · {ap.selfRegistered}</span> : null}
                {c.registration === 'metadata_document' ? <span class="muted"> · {ap.metadataDocument}</span> : null}
              </>
            ),
          },
          { label: ap.grantTypes, cell: (c) => c.grant_types.map(grantLabel).join(', ') },
          { label: ap.redirectUris, wrap: true, cell: (c) => dash(c.redirect_uris.join(' ')) },
          { label: k.status, cell: (c) => <Badge on={c.is_active} yes={k.active} no={k.deactivated} /> },
        ]}
      />
    </>,
  );
}

/** The fields of an application form (mapped onto the API body in one place: `asClientBody` in the router). */
export interface ApplicationValues {
  name: string;
  type: string;
  grant_types: string[];
  redirect_uris: string;
  post_logout_redirect_uris: string;
  /** One origin a line; empty: the default (the redirect URIs' origins for a public application). */
  allowed_origins: string;
  scopes: string[];
  allowed_resources: string[];
  /** Issue 34: a private_key_jwt client's keys (JSON text) or their URL. */
  jwks: string;
  jwks_uri: string;
  /** Issue 34: "true" when the application must push its authorization requests (PAR). */
  par: string;
  /** Issue 34: "true" when every access token of the application must be DPoP-bound (RFC 9449). */
  dpop: string;
  /** Issue 34: OpenID Connect Back-Channel Logout: where logout tokens go (empty: none). */
  backchannel_logout_uri: string;
  /** "true" when the application asked for `sid` in logout tokens (always sent). */
  backchannel_logout_session_required: string;
}

export function renderApplicationForm(
  frame: ConsoleFrame,
  data: {
    client?: ConsoleClient;
    values: ApplicationValues;
    errors: FieldErrors;
    scopes: readonly string[];
    resources: ReadonlyArray<{ identifier: string; name: string }>;
    may: { write: boolean; rotate: boolean; delete: boolean };
    /** A new application: what it is (its preset), or `custom` for every option. */
    preset?: ClientPreset | 'custom';
    /** The application's page: its recent back-channel logout deliveries, newest first. */
    deliveries?: readonly BackchannelDelivery[];
  },
): string {
  const c = data.client;
  const bound = bindForm(data.values, data.errors);
  const base = c ? `/admin/applications/${encodeURIComponent(c.client_id)}` : '/admin/applications';
  const { applications: ap, common: k, nav, start: st } = pageEnv().t.console;
  // A new application from a preset shows what that kind needs; `custom` (and an existing application) everything.
  const preset = !c && data.preset && data.preset !== 'custom' ? PRESETS[data.preset] : undefined;
  const presetKey = !c && data.preset && data.preset !== 'custom' ? data.preset : undefined;
  const shows = {
    kinds: !preset || preset.type === 'confidential',
    redirects: !preset || preset.redirects,
    origins: !preset || preset.origins,
    postLogout: !preset || preset.redirects,
    par: !preset || presetKey === 'web',
    // A server-side session to end: web applications (and every option of a custom one).
    backchannel: !preset || presetKey === 'web',
  };
  const redirectHint =
    presetKey === 'web' || presetKey === 'spa' || presetKey === 'native' ? st.redirectHints[presetKey] : ap.redirectHintLong;
  return renderConsole(
    frame,
    <>
      <BackLink
        href="/admin/applications"
        label={ap.back}
        heading={c ? c.name : presetKey ? st.formTitle(presetName(presetKey)) : ap.create}
      />
      {presetKey ? <p>{st.presets[presetKey].text}</p> : null}
      {c ? (
        <Facts
          items={[
            [ap.clientId, <CopyValue id="client-id" label={ap.clientIdLower} value={c.client_id} />],
            [
              st.presetLabel,
              <>
                {presetName(presetOf({ type: c.type, grantTypes: c.grant_types, redirectUris: c.redirect_uris }))} ·{' '}
                <a href={`${base}/quick-start`}>{st.quickStart}</a>
              </>,
            ],
            [
              ap.type,
              ap.typeFact(
                clientTypeLabel(c.type),
                c.type === 'public' ? 'none' : c.token_endpoint_auth_method === 'private_key_jwt' ? 'keys' : 'secret',
              ),
            ],
            ...(c.registration
              ? [
                  [
                    ap.registered,
                    c.registration === 'dynamic'
                      ? ap.registeredDynamic
                      : c.registration === 'metadata_document'
                        ? ap.registeredMetadata
                        : ap.registeredAdmin,
                  ] as [string, string],
                ]
              : []),
            [k.status, <Badge on={c.is_active} yes={k.active} no={k.deactivated} />],
            [
              ap.originsInForce,
              `${dash(c.allowed_origins.join(' '))}${c.allowed_origins_default && c.allowed_origins.length ? ` ${ap.originsDefault}` : ''}`,
            ],
            [k.created, <Time at={c.created_at} />],
          ]}
        />
      ) : null}
      {data.may.write ? (
        <PostForm action={base} csrf={frame.csrf}>
          {presetKey ? <input type="hidden" name="preset" value={presetKey} /> : null}
          <Field {...bound('name')} label={k.name} required hint={ap.nameHint} />
          {c ? null : shows.kinds ? (
            <Radios
              name="type"
              legend={ap.kind}
              value={data.values.type}
              errors={data.errors}
              options={[
                { value: 'confidential', label: ap.kindConfidential, hint: ap.kindConfidentialHint },
                { value: 'private_key_jwt', label: ap.kindKeys, hint: ap.kindKeysHint },
                ...(preset ? [] : [{ value: 'public', label: ap.kindPublic, hint: ap.kindPublicHint }]),
              ]}
            />
          ) : (
            <input type="hidden" name="type" value="public" />
          )}
          {(!c && shows.kinds) || c?.token_endpoint_auth_method === 'private_key_jwt' ? (
            <>
              <TextArea {...bound('jwks')} label={ap.jwks} hint={ap.jwksHint} />
              <Field {...bound('jwks_uri')} label={ap.jwksUri} hint={ap.jwksUriHint} />
            </>
          ) : null}
          {preset ? (
            data.values.grant_types.map((g) => <input type="hidden" name="grant_types" value={g} />)
          ) : (
            <Checkboxes
              name="grant_types"
              legend={ap.grantTypes}
              options={grantTypeOptions()}
              checked={data.values.grant_types}
              errors={data.errors}
            />
          )}
          {shows.redirects ? <TextArea {...bound('redirect_uris')} label={ap.redirectUris} hint={redirectHint} /> : null}
          {shows.origins ? <TextArea {...bound('allowed_origins')} label={ap.allowedOrigins} hint={ap.allowedOriginsHint} /> : null}
          {shows.postLogout ? <TextArea {...bound('post_logout_redirect_uris')} label={ap.postLogout} hint={ap.postLogoutHint} /> : null}
          <Checkboxes
            name="scopes"
            legend={ap.scopes}
            options={data.scopes.map((s) => ({ value: s }))}
            checked={data.values.scopes}
            errors={data.errors}
          />
          {shows.par ? <Checkbox name="par" label={ap.parLabel} checked={data.values.par === 'true'} hint={ap.parHint} /> : null}
          <Checkbox name="dpop" label={ap.dpopLabel} checked={data.values.dpop === 'true'} hint={ap.dpopHint} />
          {shows.backchannel ? (
            <fieldset>
              <legend>{ap.backchannelLegend}</legend>
              <Field {...bound('backchannel_logout_uri')} type="url" label={ap.backchannelUri} hint={ap.backchannelUriHint} />
              <Checkbox
                name="backchannel_logout_session_required"
                label={ap.backchannelSessionRequired}
                checked={data.values.backchannel_logout_session_required === 'true'}
                hint={ap.backchannelSessionRequiredHint}
              />
            </fieldset>
          ) : null}
          {data.resources.length ? (
            <Checkboxes
              name="allowed_resources"
              legend={ap.resourcesLegend}
              hint={ap.resourcesHint}
              options={data.resources.map((r) => ({ value: r.identifier, label: `${r.name} — ${r.identifier}` }))}
              checked={data.values.allowed_resources}
              errors={data.errors}
            />
          ) : (
            <p class="hint">
              {ap.noResourcesBefore} <a href="/admin/api-resources/new">{ap.noResourcesLink}</a> {ap.noResourcesAfter}
            </p>
          )}
          {data.errors._form ? (
            <p class="field-error" role="alert">
              <RefusalText value={data.errors._form} />
            </p>
          ) : null}
          <Submit label={c ? ap.save : ap.createButton} />
        </PostForm>
      ) : (
        <Facts
          items={[
            [ap.grantTypes, c ? c.grant_types.map(grantLabel).join(', ') : '—'],
            [ap.redirectUris, c ? dash(c.redirect_uris.join(' ')) : '—'],
            [ap.scopes, c ? c.scopes.join(' ') : '—'],
            [nav.resources, c ? dash(c.allowed_resources.join(' ')) : '—'],
          ]}
        />
      )}
      {c && c.is_active ? (
        <Actions>
          {data.may.rotate && c.type === 'confidential' && c.token_endpoint_auth_method !== 'private_key_jwt' ? (
            <ActionButton action={`${base}/rotate`} csrf={frame.csrf} label={ap.rotate} danger />
          ) : null}
          {data.may.delete ? <ActionButton action={`${base}/deactivate`} csrf={frame.csrf} label={ap.deactivate} danger /> : null}
        </Actions>
      ) : null}
      {c && (c.backchannel_logout_uri || data.deliveries?.length) ? <BackchannelDeliveries deliveries={data.deliveries ?? []} /> : null}
    </>,
  );
}

/** Issue 34: an application's recent back-channel logout deliveries (GET …/backchannel-logout-deliveries). */
function BackchannelDeliveries(props: { deliveries: readonly BackchannelDelivery[] }) {
  const { applications: ap, common: k } = pageEnv().t.console;
  const status = (s: string) => (s === 'delivered' ? ap.deliveryDelivered : s === 'failed' ? ap.deliveryFailed : ap.deliveryPending);
  return (
    <section aria-labelledby="backchannel-deliveries">
      <h2 id="backchannel-deliveries">{ap.deliveriesTitle}</h2>
      <Table
        caption={ap.deliveriesIntro}
        rows={props.deliveries}
        empty={ap.deliveriesNone}
        columns={[
          { label: ap.deliveryEnded, cell: (d) => <Time at={d.created_at} /> },
          { label: k.status, cell: (d) => <Badge on={d.status !== 'failed'} yes={status(d.status)} no={status(d.status)} /> },
          { label: ap.deliveryAttempts, cell: (d) => d.attempts },
          {
            label: ap.deliveryLastAnswer,
            wrap: true,
            cell: (d) => (d.last_response_status !== null ? `HTTP ${d.last_response_status}` : (d.last_error ?? '—')),
          },
          { label: ap.deliveryLastAttempt, cell: (d) => (d.last_attempt_at ? <Time at={d.last_attempt_at} /> : '—') },
        ]}
      />
    </section>
  );
}

/**
 * The one page that shows a client secret: the answer to the create or rotate post itself, never cached or redirected to.
 * It is also the application's quick-start: the settings to copy and the matching guide's code, filled in.
 */
export function renderSecretOnce(frame: ConsoleFrame, data: QuickStartData & { heading: string }): string {
  const c = data.client;
  const ap = pageEnv().t.console.applications;
  return renderConsole(
    frame,
    <>
      <h1>{data.heading}</h1>
      <p class="ok" role="status">
        {data.secret ? ap.copySecretNow : c.type === 'public' ? ap.publicNoSecret : ap.settingsHeading}
      </p>
      <QuickStart {...data} heading="h2" />
      <p>
        <a href={`/admin/applications/${encodeURIComponent(c.client_id)}`}>{data.secret ? ap.copiedContinue : ap.continue}</a>
      </p>
    </>,
  );
}

export interface AuditFilterValues {
  type: string;
  actor: string;
  subject: string;
  from: string;
  to: string;
}

/** The audit log: the events of GET /api/admin/audit-events as sent, the filter as entered, the page links. */
export interface AuditProps {
  events: AuditEvent[];
  filter: AuditFilterValues;
  /** The type filter's choices: the types ever stored, grouped (GET /api/admin/audit-events/types). */
  groups: ReadonlyArray<{ group: string; types: readonly string[] }>;
  errors: FieldErrors;
  count?: ListCount;
  next?: string;
  prev?: string;
  csv: string;
}

export function renderAudit(frame: ConsoleFrame, data: AuditProps): string {
  const f = data.filter;
  const bound = bindForm(f, data.errors);
  const a = c().audit;
  const filtered = Boolean(f.type || f.actor || f.subject || f.from || f.to);
  return renderConsole(
    frame,
    <>
      <h1>{a.title}</h1>
      <FilterForm action="/admin/audit" label={a.filtersLabel} button={a.filter}>
        <div>
          <label for="f-type">{a.type}</label>
          <select id="f-type" name="type">
            <option value="" selected={!f.type}>
              {a.anyType}
            </option>
            {data.groups.map((g) => (
              <optgroup label={a.groups[g.group] ?? g.group}>
                {g.types.map((t) => (
                  <option value={t} selected={t === f.type}>
                    {t}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </div>
        <Field {...bound('actor')} label={a.actor} />
        <Field {...bound('subject')} label={a.subject} />
        <Field {...bound('from')} type="date" label={a.from} />
        <Field {...bound('to')} type="date" label={a.until} />
      </FilterForm>
      <p>
        <a href={data.csv}>{a.csv}</a>
      </p>
      {data.count && data.events.length ? <CountLine count={data.count} what="events" filtered={filtered} /> : null}
      <AuditTable events={data.events} caption={a.caption} />
      <Pagination prev={data.prev} next={data.next} label={a.pagesLabel} />
    </>,
  );
}

export function renderSigningKeys(frame: ConsoleFrame, data: { keys: SigningKey[]; canRotate: boolean }): string {
  const { keys: ks, common: co } = c();
  return renderConsole(
    frame,
    <>
      <h1>{ks.title}</h1>
      <p>{ks.intro}</p>
      <Table
        caption={ks.caption}
        rows={data.keys}
        empty={ks.none}
        columns={[
          { label: ks.keyId, wrap: true, cell: (k) => <code>{k.kid}</code> },
          { label: ks.algorithm, cell: (k) => k.alg },
          { label: co.created, cell: (k) => <Time at={k.created_at} /> },
          {
            label: co.status,
            cell: (k) =>
              k.retired_at ? (
                <>
                  {ks.retired} <Time at={k.retired_at} />
                </>
              ) : (
                <strong>{ks.current}</strong>
              ),
          },
        ]}
      />
      {data.canRotate ? (
        <ActionButton action="/admin/signing-keys/rotate" csrf={frame.csrf} label={ks.rotate} danger />
      ) : (
        <p class="muted">{ks.superAdminOnly}</p>
      )}
    </>,
  );
}

/** A destructive action's confirmation (works without JavaScript: the same post again with confirm=yes). */
export function renderConfirm(
  frame: ConsoleFrame,
  data: { message: ComponentChildren; action: string; button: string; cancel: string },
): string {
  // The question is the page's title and its heading.
  return renderConsole(
    frame,
    <>
      <h1>{frame.title}</h1>
      <p>{data.message}</p>
      <PostForm action={data.action} csrf={frame.csrf} fields={{ confirm: 'yes' }}>
        <Actions>
          <button type="submit" class="danger">
            {data.button}
          </button>
          <a href={data.cancel}>{c().common.cancel}</a>
        </Actions>
      </PostForm>
    </>,
  );
}

export function renderConsoleError(frame: ConsoleFrame, data: { title: string; message: ComponentChildren }): string {
  return renderConsole(
    frame,
    <>
      <h1>{data.title}</h1>
      <p role="alert">{data.message}</p>
      <p>
        <a href="/admin">{c().common.backToOverview}</a>
      </p>
    </>,
  );
}
