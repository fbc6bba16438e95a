import type { ComponentChildren } from 'preact';
import type { AuditEventRow } from '../../db/repositories/audit-events.repo';
import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import type { RoleRow } from '../../db/repositories/roles.repo';
import type { SessionRow } from '../../db/repositories/sessions.repo';
import type { UserRow } from '../../db/repositories/users.repo';
import type { GrantWithClientRow } from '../../db/repositories/oauth-grants.repo';
import type { PrincipalRole } from '../../db/repositories/principal.repo';
import type { AdminSummary } from '../../services/admin.service';
import type { ListCount } from '../../services/list-count';
import type { DailySignIns, FactorsOfUser } from '../../services/user-admin.service';
import { Actions, Time } from '../kit';
import {
  ActionButton,
  Badge,
  Checkboxes,
  CopyValue,
  Facts,
  Field,
  CountLine,
  Pagination,
  PostForm,
  Radios,
  Select,
  Table,
  TextArea,
  type FieldErrors,
} from './components';
import { renderConsole, type ConsoleFrame } from './layout';
import { SignInChart } from './chart';

const dash = (v: string | null | undefined) => (v ? v : '—');
const fullName = (u: { firstName: string; lastName: string }) => `${u.firstName} ${u.lastName}`.trim();
const roleLabel = (r: { name: string; application: string | null }) => (r.application ? `${r.name} (${r.application})` : r.name);

export function renderOverview(frame: ConsoleFrame, data: { summary: AdminSummary; days: DailySignIns[] }): string {
  const s = data.summary;
  const cards: Array<[string, number, string]> = [
    ['Users', s.users, '/admin/users'],
    ['Active users', s.activeUsers, '/admin/users?status=active'],
    ['Administrators', s.admins, '/admin/users?tier=admin'],
    ['Applications', s.clients, '/admin/applications'],
    ['Active applications', s.activeClients, '/admin/applications'],
    ['Roles', s.roles, '/admin/roles'],
  ];
  return renderConsole(
    frame,
    <>
      <h1>Overview</h1>
      <ul class="cards">
        {cards.map(([label, n, href]) => (
          <li>
            <a href={href}>
              <span class="n">{n}</span>
              {label}
            </a>
          </li>
        ))}
      </ul>
      <h2 id="chart-h">Sign-ins, last 30 days</h2>
      <SignInChart days={data.days} labelledBy="chart-h" />
      <details>
        <summary>Sign-ins per day as a table</summary>
        <Table
          caption="Sign-ins and failed sign-ins per day (UTC)"
          rows={[...data.days].reverse()}
          empty="No sign-ins yet."
          columns={[
            { label: 'Day', cell: (d) => d.day },
            { label: 'Sign-ins', cell: (d) => d.succeeded },
            { label: 'Failed sign-ins', cell: (d) => d.failed },
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
    users: Array<{ user: UserRow; roles: PrincipalRole[] }>;
    count: ListCount;
    filter: UsersFilter;
    prev?: string;
    next?: string;
  },
): string {
  const filtered = Boolean(data.filter.q || data.filter.status || data.filter.tier);
  return renderConsole(
    frame,
    <>
      <h1>Users</h1>
      <p>
        <a class="button" href="/admin/users/new">
          Invite a user
        </a>
      </p>
      <form method="get" action="/admin/users" class="filters" role="search" aria-label="Users">
        <Field name="q" type="search" label="Email or name" value={data.filter.q} />
        <Select
          name="status"
          label="Status"
          value={data.filter.status}
          options={[
            { value: '', label: 'Any' },
            { value: 'active', label: 'Active' },
            { value: 'inactive', label: 'Inactive' },
          ]}
        />
        <Select
          name="tier"
          label="Role"
          value={data.filter.tier}
          options={[
            { value: '', label: 'Anyone' },
            { value: 'admin', label: 'Admin tier' },
          ]}
        />
        <div>
          <button type="submit">Search</button>
        </div>
      </form>
      {data.users.length ? <CountLine count={data.count} noun={['user', 'users']} filtered={filtered} /> : null}
      <Table
        caption="Users, newest first"
        rows={data.users}
        empty={
          filtered ? (
            'No user matches these filters.'
          ) : (
            <>
              No users yet — <a href="/admin/users/new">invite one</a>.
            </>
          )
        }
        columns={[
          { label: 'Email', wrap: true, cell: ({ user }) => <a href={`/admin/users/${user.id}`}>{user.email}</a> },
          { label: 'Name', cell: ({ user }) => dash(fullName(user)) },
          { label: 'Roles', cell: ({ roles }) => (roles.length ? roles.map(roleLabel).join(', ') : '—') },
          { label: 'Status', cell: ({ user }) => <Badge on={user.isActive} yes="Active" no="Inactive" /> },
          { label: 'Verified', cell: ({ user }) => (user.emailVerified ? 'Yes' : 'No') },
          { label: 'Last sign-in', cell: ({ user }) => (user.lastLoginAt ? <Time at={user.lastLoginAt} /> : 'Never') },
        ]}
      />
      <Pagination prev={data.prev} next={data.next} label="User pages" />
    </>,
  );
}

export function renderInviteUser(frame: ConsoleFrame, data: { values: Record<string, string>; errors: FieldErrors }): string {
  return renderConsole(
    frame,
    <>
      <p>
        <a href="/admin/users">← Users</a>
      </p>
      <h1>Invite a user</h1>
      <p>The person gets an email with a link to choose a password (valid one hour).</p>
      <PostForm action="/admin/users" csrf={frame.csrf}>
        <Field name="email" type="email" label="Email" value={data.values.email} errors={data.errors} required autocomplete="off" />
        <Field name="first_name" label="First name" value={data.values.first_name} errors={data.errors} required />
        <Field name="last_name" label="Last name" value={data.values.last_name} errors={data.errors} required />
        <Actions>
          <button type="submit">Send the invitation</button>
        </Actions>
      </PostForm>
    </>,
  );
}

export interface UserDetailData {
  user: UserRow;
  roles: PrincipalRole[];
  allRoles: RoleRow[];
  sessions: SessionRow[];
  apps: GrantWithClientRow[];
  factors: FactorsOfUser;
  events: AuditEventRow[];
  errors: FieldErrors;
  values?: Record<string, string>;
  isSelf: boolean;
}

export function renderUserDetail(frame: ConsoleFrame, d: UserDetailData): string {
  const u = d.user;
  const base = `/admin/users/${u.id}`;
  const v = d.values ?? {};
  const assignable = d.allRoles.filter((r) => r.isActive && !d.roles.some((held) => held.id === r.id));
  return renderConsole(
    frame,
    <>
      <p>
        <a href="/admin/users">← Users</a>
      </p>
      <h1>{fullName(u) || u.email}</h1>
      <Facts
        items={[
          ['Email', u.email],
          ['Status', <Badge on={u.isActive} yes="Active" no="Inactive" />],
          ['Email verified', u.emailVerified ? 'Yes' : 'No'],
          ['Created', <Time at={u.createdAt} />],
          ['Last sign-in', u.lastLoginAt ? <Time at={u.lastLoginAt} /> : 'Never'],
          ['User id', <code>{u.id}</code>],
        ]}
      />
      <div class="actions">
        {u.isActive ? (
          <ActionButton action={`${base}/deactivate`} csrf={frame.csrf} label="Deactivate" danger />
        ) : (
          <ActionButton action={`${base}/activate`} csrf={frame.csrf} label="Re-activate" />
        )}
        <ActionButton action={`${base}/password-link`} csrf={frame.csrf} label="Send a set-password link" />
      </div>

      <section class="panel" aria-labelledby="profile-h">
        <h2 id="profile-h">Profile</h2>
        <PostForm action={`${base}/profile`} csrf={frame.csrf}>
          <Field name="first_name" label="First name" value={v.first_name ?? u.firstName} errors={d.errors} />
          <Field name="last_name" label="Last name" value={v.last_name ?? u.lastName} errors={d.errors} />
          <Field name="email" type="email" label="Email" value={v.email ?? u.email} errors={d.errors} autocomplete="off" />
          <div class="check">
            <input type="checkbox" id="f-email_verified" name="email_verified" value="true" checked={u.emailVerified} />
            <label for="f-email_verified">Email address verified</label>
          </div>
          <Actions>
            <button type="submit">Save profile</button>
          </Actions>
        </PostForm>
      </section>

      <section class="panel" aria-labelledby="roles-h">
        <h2 id="roles-h">Roles</h2>
        <Table
          caption="Roles held"
          rows={d.roles}
          empty="No roles: this person can sign in but administers nothing."
          columns={[
            { label: 'Role', cell: (r) => <a href={`/admin/roles/${r.id}`}>{r.name}</a> },
            { label: 'Application', cell: (r) => r.application ?? 'Global' },
            {
              label: 'Action',
              cell: (r) => (
                <ActionButton
                  action={`${base}/roles/${r.id}/remove`}
                  csrf={frame.csrf}
                  label="Remove"
                  danger
                  ariaLabel={`Remove role ${roleLabel(r)}`}
                />
              ),
            },
          ]}
        />
        {assignable.length ? (
          <PostForm action={`${base}/roles`} csrf={frame.csrf} class="filters">
            <Select name="role_id" label="Role to assign" options={assignable.map((r) => ({ value: r.id, label: roleLabel(r) }))} />
            <div>
              <button type="submit">Assign role</button>
            </div>
          </PostForm>
        ) : null}
      </section>

      <section class="panel" aria-labelledby="sessions-h">
        <h2 id="sessions-h">Sessions</h2>
        <Table
          caption="Active sessions"
          rows={d.sessions}
          empty="No active session."
          columns={[
            { label: 'Started', cell: (s) => <Time at={s.createdAt} /> },
            { label: 'Last used', cell: (s) => <Time at={s.lastUsedAt} /> },
            { label: 'App', cell: (s) => dash(s.clientId) },
            { label: 'IP address', cell: (s) => dash(s.ip) },
            { label: 'Browser', wrap: true, cell: (s) => dash(s.userAgent) },
            {
              label: 'Action',
              cell: (s) => (
                <ActionButton
                  action={`${base}/sessions/${s.id}/revoke`}
                  csrf={frame.csrf}
                  label="Revoke"
                  danger
                  ariaLabel={`Revoke session started ${s.createdAt.toISOString()}`}
                />
              ),
            },
          ]}
        />
      </section>

      <section class="panel" aria-labelledby="apps-h">
        <h2 id="apps-h">Connected apps</h2>
        <Table
          caption="Applications this person approved"
          rows={d.apps}
          empty="No connected apps."
          columns={[
            { label: 'Application', cell: (a) => <a href={`/admin/applications/${encodeURIComponent(a.clientId)}`}>{a.clientName}</a> },
            { label: 'Scopes', cell: (a) => a.scopes.join(' ') },
            { label: 'Granted', cell: (a) => <Time at={a.grantedAt} /> },
          ]}
        />
      </section>

      <section class="panel" aria-labelledby="factors-h">
        <h2 id="factors-h">Second factors</h2>
        <Facts
          items={[
            ['Authenticator app', d.factors.totp ? 'On' : 'Off'],
            ['Passkeys', d.factors.passkeys.length ? d.factors.passkeys.map((p) => p.name).join(', ') : 'None'],
            ['Recovery codes left', String(d.factors.recoveryCodesLeft)],
          ]}
        />
        {d.isSelf ? (
          <p class="muted">
            Change your own second factors on <a href="/account#second-factors">your account page</a>.
          </p>
        ) : d.factors.totp || d.factors.passkeys.length || d.factors.recoveryCodesLeft ? (
          <ActionButton action={`${base}/mfa/reset`} csrf={frame.csrf} label="Reset second factors" danger />
        ) : null}
      </section>

      <section class="panel" aria-labelledby="events-h">
        <h2 id="events-h">Recent audit events</h2>
        <AuditTable events={d.events} caption="Latest events done by or concerning this user" />
        <p>
          <a href={`/admin/audit?subject=${u.id}`}>All events concerning this user</a>
        </p>
      </section>
    </>,
  );
}

function AuditTable(props: { events: AuditEventRow[]; caption: string }) {
  return (
    <Table
      caption={props.caption}
      rows={props.events}
      empty="No events."
      columns={[
        { label: 'When', cell: (e) => <Time at={e.occurredAt} /> },
        { label: 'Type', cell: (e) => <code>{e.type}</code> },
        { label: 'Actor', wrap: true, cell: (e) => (e.actorId ? <a href={`/admin/users/${e.actorId}`}>{e.actorId}</a> : '—') },
        { label: 'Subject', wrap: true, cell: (e) => dash(e.subjectId) },
        { label: 'App', wrap: true, cell: (e) => dash(e.clientId) },
        { label: 'IP', cell: (e) => dash(e.ip) },
        { label: 'Detail', wrap: true, cell: (e) => (Object.keys(e.detail).length ? <code>{JSON.stringify(e.detail)}</code> : '—') },
      ]}
    />
  );
}

export function renderRoles(frame: ConsoleFrame, data: { roles: RoleRow[]; canEdit: boolean }): string {
  return renderConsole(
    frame,
    <>
      <h1>Roles</h1>
      {data.canEdit ? (
        <p>
          <a class="button" href="/admin/roles/new">
            Create a role
          </a>
        </p>
      ) : (
        <p class="muted">Only a super_admin creates and changes roles.</p>
      )}
      <Table
        caption="Roles, global and per application"
        rows={data.roles}
        empty={<>No roles yet — {data.canEdit ? <a href="/admin/roles/new">create one</a> : 'a super_admin can create one'}.</>}
        columns={[
          { label: 'Name', cell: (r) => <a href={`/admin/roles/${r.id}`}>{r.name}</a> },
          { label: 'Application', cell: (r) => r.application ?? 'Global' },
          { label: 'Permissions', cell: (r) => r.permissions.length },
          { label: 'Status', cell: (r) => <Badge on={r.isActive} yes="Active" no="Deactivated" /> },
          { label: 'Description', cell: (r) => dash(r.description) },
        ]}
      />
    </>,
  );
}

export function renderRoleForm(
  frame: ConsoleFrame,
  data: {
    role?: RoleRow;
    permissions: Array<{ name: string; description: string }>;
    values: { name?: string; description?: string; application?: string; permissions: string[] };
    errors: FieldErrors;
    canEdit: boolean;
  },
): string {
  const r = data.role;
  return renderConsole(
    frame,
    <>
      <p>
        <a href="/admin/roles">← Roles</a>
      </p>
      <h1>{r ? `Role ${roleLabel(r)}` : 'Create a role'}</h1>
      {r ? (
        <Facts
          items={[
            ['Status', <Badge on={r.isActive} yes="Active" no="Deactivated" />],
            ['Application', r.application ?? 'Global'],
            ['Role id', <code>{r.id}</code>],
          ]}
        />
      ) : null}
      {data.canEdit ? (
        <PostForm action={r ? `/admin/roles/${r.id}` : '/admin/roles'} csrf={frame.csrf}>
          <Field
            name="name"
            label="Name"
            value={data.values.name}
            errors={data.errors}
            required
            hint="Letters, digits and _ . : - (e.g. billing_reader)"
          />
          <Field name="description" label="Description" value={data.values.description} errors={data.errors} />
          {r ? null : (
            <Field name="application" label="Application (empty: a global role)" value={data.values.application} errors={data.errors} />
          )}
          <Checkboxes
            name="permissions"
            legend="Permissions"
            options={data.permissions.map((p) => ({ value: p.name, label: `${p.name} — ${p.description}` }))}
            checked={data.values.permissions}
            errors={data.errors}
          />
          <Actions>
            <button type="submit">{r ? 'Save role' : 'Create role'}</button>
          </Actions>
        </PostForm>
      ) : (
        <p>Permissions: {data.values.permissions.join(', ') || 'none'}</p>
      )}
      {r && data.canEdit && r.isActive ? (
        <Actions>
          <ActionButton action={`/admin/roles/${r.id}/deactivate`} csrf={frame.csrf} label="Deactivate role" danger />
        </Actions>
      ) : null}
    </>,
  );
}

/** A client as the console shows it; `registration` says how it came to exist (CONTRACT §13). */
export type ConsoleClient = OAuthClientRow;

const CLIENT_TYPE_LABEL: Record<string, string> = { confidential: 'Confidential', public: 'Public' };

/** The grant types of CONTRACT §12 as the form offers them. */
export const GRANT_TYPE_OPTIONS: Array<{ value: string; label: string }> = [
  { value: 'authorization_code', label: 'Authorization code with PKCE (people sign in through a browser)' },
  { value: 'refresh_token', label: 'Refresh tokens (stay signed in)' },
  { value: 'client_credentials', label: 'Client credentials (machine to machine, no user; confidential only)' },
  { value: 'urn:ietf:params:oauth:grant-type:device_code', label: 'Device code (TVs and command-line tools)' },
];

const grantLabel = (g: string) => (g === 'urn:ietf:params:oauth:grant-type:device_code' ? 'device_code' : g);

export function renderApplications(frame: ConsoleFrame, data: { clients: ConsoleClient[]; canWrite: boolean }): string {
  return renderConsole(
    frame,
    <>
      <h1>Applications</h1>
      {data.canWrite ? (
        <p>
          <a class="button" href="/admin/applications/new">
            Create an application
          </a>
        </p>
      ) : null}
      <Table
        caption="OAuth applications"
        rows={data.clients}
        empty={
          data.canWrite ? (
            <>
              No applications yet — <a href="/admin/applications/new">create one</a>.
            </>
          ) : (
            'No applications yet.'
          )
        }
        columns={[
          { label: 'Name', cell: (c) => <a href={`/admin/applications/${encodeURIComponent(c.clientId)}`}>{c.name}</a> },
          { label: 'Client ID', wrap: true, cell: (c) => <code>{c.clientId}</code> },
          {
            label: 'Type',
            cell: (c) => (
              <>
                {CLIENT_TYPE_LABEL[c.type] ?? c.type}
                {c.registration === 'dynamic' ? <span class="muted"> · self-registered</span> : null}
                {c.registration === 'metadata_document' ? <span class="muted"> · metadata document</span> : null}
              </>
            ),
          },
          { label: 'Grant types', cell: (c) => c.grantTypes.map(grantLabel).join(', ') },
          { label: 'Redirect URIs', wrap: true, cell: (c) => dash(c.redirectUris.join(' ')) },
          { label: 'Status', cell: (c) => <Badge on={c.isActive} yes="Active" no="Deactivated" /> },
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
  scopes: string[];
  allowed_resources: string[];
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
  },
): string {
  const c = data.client;
  const base = c ? `/admin/applications/${encodeURIComponent(c.clientId)}` : '/admin/applications';
  return renderConsole(
    frame,
    <>
      <p>
        <a href="/admin/applications">← Applications</a>
      </p>
      <h1>{c ? c.name : 'Create an application'}</h1>
      {c ? (
        <Facts
          items={[
            ['Client ID', <CopyValue id="client-id" label="client ID" value={c.clientId} />],
            [
              'Type',
              `${CLIENT_TYPE_LABEL[c.type] ?? c.type} (token endpoint authentication: ${c.type === 'public' ? 'none, PKCE' : 'client secret'})`,
            ],
            ...(c.registration
              ? [
                  [
                    'Registered',
                    c.registration === 'dynamic'
                      ? 'Dynamically (RFC 7591), not reviewed by an administrator'
                      : c.registration === 'metadata_document'
                        ? 'From its Client ID Metadata Document (the client_id URL), not reviewed by an administrator'
                        : 'By an administrator',
                  ] as [string, string],
                ]
              : []),
            ['Status', <Badge on={c.isActive} yes="Active" no="Deactivated" />],
            ['Created', <Time at={c.createdAt} />],
          ]}
        />
      ) : null}
      {data.may.write ? (
        <PostForm action={base} csrf={frame.csrf}>
          <Field
            name="name"
            label="Name"
            value={data.values.name}
            errors={data.errors}
            required
            hint="Shown to people on the consent screen."
          />
          {c ? null : (
            <Radios
              name="type"
              legend="Kind of application"
              value={data.values.type}
              errors={data.errors}
              options={[
                {
                  value: 'confidential',
                  label: 'Confidential: a server-side app that keeps a secret',
                  hint: 'Web apps with a backend, APIs calling other APIs (client credentials).',
                },
                {
                  value: 'public',
                  label: 'Public: an app that cannot keep a secret',
                  hint: 'Single-page, mobile, desktop and command-line apps: no secret, PKCE only. The kind cannot change later.',
                },
              ]}
            />
          )}
          <Checkboxes
            name="grant_types"
            legend="Grant types"
            options={GRANT_TYPE_OPTIONS}
            checked={data.values.grant_types}
            errors={data.errors}
          />
          <TextArea
            name="redirect_uris"
            label="Redirect URIs"
            value={data.values.redirect_uris}
            errors={data.errors}
            hint={
              'One per line, matched exactly. https; plain http only on localhost, 127.0.0.1 or [::1], which match any port ' +
              '(RFC 8252). Public (native) apps may also use a private-use scheme such as com.example.app:/callback. ' +
              'Not needed for client credentials or the device code alone.'
            }
          />
          <TextArea
            name="post_logout_redirect_uris"
            label="Post-logout redirect URIs"
            value={data.values.post_logout_redirect_uris}
            errors={data.errors}
            hint="One per line; may be empty."
          />
          <Checkboxes
            name="scopes"
            legend="Scopes"
            options={data.scopes.map((s) => ({ value: s }))}
            checked={data.values.scopes}
            errors={data.errors}
          />
          {data.resources.length ? (
            <Checkboxes
              name="allowed_resources"
              legend="API resources it may ask tokens for"
              hint="The app may then ask for the scopes of these APIs too (RFC 8707 resource indicators)."
              options={data.resources.map((r) => ({ value: r.identifier, label: `${r.name} — ${r.identifier}` }))}
              checked={data.values.allowed_resources}
              errors={data.errors}
            />
          ) : (
            <p class="hint">
              No API resources registered yet — <a href="/admin/api-resources/new">register one</a> to let apps ask for tokens for your API.
            </p>
          )}
          {data.errors._form ? (
            <p class="field-error" role="alert">
              {data.errors._form}
            </p>
          ) : null}
          <Actions>
            <button type="submit">{c ? 'Save application' : 'Create application'}</button>
          </Actions>
        </PostForm>
      ) : (
        <Facts
          items={[
            ['Grant types', c ? c.grantTypes.map(grantLabel).join(', ') : '—'],
            ['Redirect URIs', c ? dash(c.redirectUris.join(' ')) : '—'],
            ['Scopes', c ? c.scopes.join(' ') : '—'],
            ['API resources', c ? dash(c.allowedResources.join(' ')) : '—'],
          ]}
        />
      )}
      {c && c.isActive ? (
        <Actions>
          {data.may.rotate && c.type === 'confidential' ? (
            <ActionButton action={`${base}/rotate`} csrf={frame.csrf} label="Rotate secret" danger />
          ) : null}
          {data.may.delete ? <ActionButton action={`${base}/deactivate`} csrf={frame.csrf} label="Deactivate application" danger /> : null}
        </Actions>
      ) : null}
    </>,
  );
}

/** The one page that shows a client secret: the answer to the create or rotate post itself, never cached or redirected to. */
export function renderSecretOnce(
  frame: ConsoleFrame,
  data: { heading: string; client: ConsoleClient; secret?: string; issuer: string; discoveryUrl: string },
): string {
  const c = data.client;
  const settings: Array<[string, ComponentChildren]> = [
    ['Issuer', <CopyValue id="issuer" label="issuer" value={data.issuer} />],
    ['Discovery URL', <CopyValue id="discovery" label="discovery URL" value={data.discoveryUrl} />],
    ['Client ID', <CopyValue id="client-id" label="client ID" value={c.clientId} />],
  ];
  if (data.secret) settings.push(['Client secret', <CopyValue id="client-secret" label="client secret" value={data.secret} />]);
  if (c.redirectUris[0]) settings.push(['Redirect URI', <CopyValue id="redirect-uri" label="redirect URI" value={c.redirectUris[0]} />]);
  settings.push(['Scopes', c.scopes.join(' ')], ['Grant types', c.grantTypes.map(grantLabel).join(', ')]);
  if (c.type === 'public') settings.push(['Token endpoint authentication', 'none (send client_id with PKCE)']);
  return renderConsole(
    frame,
    <>
      <h1>{data.heading}</h1>
      <p class="ok" role="status">
        {data.secret
          ? 'Copy the client secret now: it is shown only on this page and cannot be read back.'
          : 'A public client has no secret: it signs in with its client ID and PKCE.'}
      </p>
      <h2>Settings for your application</h2>
      <Facts items={settings} />
      <p>
        <a href={`/admin/applications/${encodeURIComponent(c.clientId)}`}>
          {data.secret ? 'I have copied the secret — continue to the application' : 'Continue to the application'}
        </a>
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

export function renderAudit(
  frame: ConsoleFrame,
  data: {
    events: AuditEventRow[];
    filter: AuditFilterValues;
    types: readonly string[];
    errors: FieldErrors;
    count?: ListCount;
    next?: string;
    prev?: string;
    csv: string;
  },
): string {
  const f = data.filter;
  const filtered = Boolean(f.type || f.actor || f.subject || f.from || f.to);
  return renderConsole(
    frame,
    <>
      <h1>Audit log</h1>
      <form method="get" action="/admin/audit" class="filters" role="search" aria-label="Audit events">
        <Select
          name="type"
          label="Type"
          value={f.type}
          options={[{ value: '', label: 'Any type' }, ...data.types.map((t) => ({ value: t, label: t }))]}
        />
        <Field name="actor" label="Actor (user id)" value={f.actor} errors={data.errors} />
        <Field name="subject" label="Subject (user, role or client id)" value={f.subject} errors={data.errors} />
        <Field name="from" type="date" label="From (UTC)" value={f.from} errors={data.errors} />
        <Field name="to" type="date" label="Until (UTC, inclusive)" value={f.to} errors={data.errors} />
        <div>
          <button type="submit">Filter</button>
        </div>
      </form>
      <p>
        <a href={data.csv}>Download these events as CSV</a>
      </p>
      {data.count && data.events.length ? <CountLine count={data.count} noun={['event', 'events']} filtered={filtered} /> : null}
      <AuditTable events={data.events} caption="Events, newest first" />
      <Pagination prev={data.prev} next={data.next} label="Audit pages" />
    </>,
  );
}

export function renderSigningKeys(
  frame: ConsoleFrame,
  data: { keys: Array<{ kid: string; alg: string; createdAt: Date; retiredAt: Date | null }>; canRotate: boolean },
): string {
  return renderConsole(
    frame,
    <>
      <h1>Signing keys</h1>
      <p>
        ID tokens and RFC 9068 access tokens are signed with the current key; retired keys stay published while tokens they signed may live.
      </p>
      <Table
        caption="Published signing keys"
        rows={data.keys}
        empty="No signing key yet: one is made at the first sign-in that needs it."
        columns={[
          { label: 'Key id', wrap: true, cell: (k) => <code>{k.kid}</code> },
          { label: 'Algorithm', cell: (k) => k.alg },
          { label: 'Created', cell: (k) => <Time at={k.createdAt} /> },
          {
            label: 'Status',
            cell: (k) =>
              k.retiredAt ? (
                <>
                  Retired <Time at={k.retiredAt} />
                </>
              ) : (
                <strong>Current</strong>
              ),
          },
        ]}
      />
      {data.canRotate ? (
        <ActionButton action="/admin/signing-keys/rotate" csrf={frame.csrf} label="Rotate signing key" danger />
      ) : (
        <p class="muted">Only a super_admin rotates signing keys.</p>
      )}
    </>,
  );
}

export function renderSettings(frame: ConsoleFrame, data: { settings: Array<[string, string]> }): string {
  return renderConsole(
    frame,
    <>
      <h1>Settings</h1>
      <p>
        The effective configuration of this instance, read from its environment at start. Secrets are masked. Change them in the environment
        and restart.
      </p>
      <Table
        caption="Effective configuration"
        rows={data.settings}
        empty="Nothing to show."
        columns={[
          { label: 'Setting', cell: ([k]) => <code>{k}</code> },
          { label: 'Value', wrap: true, cell: ([, v]) => <code>{v}</code> },
        ]}
      />
    </>,
  );
}

/** A destructive action's confirmation (works without JavaScript: the same post again with confirm=yes). */
export function renderConfirm(
  frame: ConsoleFrame,
  data: { title: string; message: ComponentChildren; action: string; button: string; cancel: string },
): string {
  return renderConsole(
    frame,
    <>
      <h1>{data.title}</h1>
      <p>{data.message}</p>
      <PostForm action={data.action} csrf={frame.csrf} fields={{ confirm: 'yes' }}>
        <Actions>
          <button type="submit" class="danger">
            {data.button}
          </button>
          <a href={data.cancel}>Cancel</a>
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
        <a href="/admin">Back to the overview</a>
      </p>
    </>,
  );
}
