import type { Role } from '../../wire/rbac/rbac.schemas';
import type { ScimConnection, ScimGroupRoles } from '../../wire/scim/scim-admin.schemas';
import { pageEnv } from '../../views/env';
import { Actions, Submit, Time } from '../../views/kit';
import { ActionButton, Checkboxes, CopyValue, Facts, Field, PostForm, Table, type FieldErrors } from '../../views/console/components';
import { BackLink, CreateButton, NoneYet } from '../../views/console/list';
import { renderConsole, type ConsoleFrame } from '../../views/console/layout';

/**
 * SCIM provisioning (docs/scim.md): connections (their token shown once, on the answer to the create or rotate post)
 * and the mapping of pushed groups to roles. Views take the wire shapes of /api/admin/scim-connections and
 * /api/admin/scim-groups.
 */

const x = () => pageEnv().t.console.scim;

export function renderConnections(frame: ConsoleFrame, data: { connections: ScimConnection[]; scimUrl: string }): string {
  const { scim: h, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <>
      <h1>{h.title}</h1>
      <p>{h.intro}</p>
      <Facts items={[[h.baseUrl, <code>{data.scimUrl}</code>]]} />
      <CreateButton href="/admin/scim/new" label={h.create}>
        {' '}
        <a href="/admin/scim-groups">{h.groupsLink}</a>
      </CreateButton>
      <Table
        caption={h.caption}
        rows={data.connections}
        empty={<NoneYet text={h.noneYet} href="/admin/scim/new" link={h.createOne} />}
        columns={[
          { label: k.name, wrap: true, cell: (c) => <a href={`/admin/scim/${c.id}`}>{c.name}</a> },
          { label: k.description, wrap: true, cell: (c) => c.description || '—' },
          { label: k.created, cell: (c) => <Time at={c.created_at} /> },
          { label: h.lastUsed, cell: (c) => (c.last_used_at ? <Time at={c.last_used_at} /> : k.never) },
        ]}
      />
    </>,
  );
}

export interface ConnectionValues {
  name: string;
  description: string;
}

export function renderConnectionForm(frame: ConsoleFrame, data: { values: ConnectionValues; errors: FieldErrors }): string {
  const { scim: h, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/scim" label={h.back} heading={h.create} />
      <PostForm action="/admin/scim" csrf={frame.csrf}>
        <Field name="name" label={k.name} value={data.values.name} errors={data.errors} required hint={h.nameHint} />
        <Field name="description" label={k.description} value={data.values.description} errors={data.errors} hint={h.descriptionHint} />
        <Submit label={h.createButton} />
      </PostForm>
    </>,
  );
}

export function renderConnection(frame: ConsoleFrame, data: { connection: ScimConnection; scimUrl: string }): string {
  const c = data.connection;
  const { scim: h, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/scim" label={h.back} heading={h.connection(c.name)} />
      <Facts
        items={[
          [k.description, c.description || '—'],
          [h.baseUrl, <code>{data.scimUrl}</code>],
          [h.token, h.tokenSet],
          [k.created, <Time at={c.created_at} />],
          [h.lastUsed, c.last_used_at ? <Time at={c.last_used_at} /> : k.never],
        ]}
      />
      <Actions>
        <ActionButton action={`/admin/scim/${c.id}/rotate`} csrf={frame.csrf} label={h.rotate} danger />
        <ActionButton action={`/admin/scim/${c.id}/delete`} csrf={frame.csrf} label={h.revoke} danger />
      </Actions>
    </>,
  );
}

/** The one page that shows a connection's token: the answer to the create or rotate post, never cached or redirected to. */
export function renderConnectionToken(
  frame: ConsoleFrame,
  data: { heading: string; connection: ScimConnection; token: string; scimUrl: string },
): string {
  const h = x();
  return renderConsole(
    frame,
    <>
      <h1>{data.heading}</h1>
      <p class="ok" role="status">
        {h.copyTokenNow}
      </p>
      <div class="secret-box">
        <Facts
          items={[
            [h.baseUrl, <code>{data.scimUrl}</code>],
            [h.token, <CopyValue id="scim-token" label={h.tokenLower} value={data.token} />],
          ]}
        />
        <p>{h.tokenUse}</p>
      </div>
      <p>
        <a href={`/admin/scim/${data.connection.id}`}>{h.copiedContinue}</a>
      </p>
    </>,
  );
}

export type RoleChoice = Pick<Role, 'id' | 'name' | 'application'>;

const roleLabel = (r: RoleChoice) => (r.application ? `${r.name} (${r.application})` : r.name);

export function renderGroups(frame: ConsoleFrame, data: { groups: ScimGroupRoles[]; roles: RoleChoice[] }): string {
  const { scim: h } = pageEnv().t.console;
  const byId = new Map(data.roles.map((r) => [r.id, r]));
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/scim" label={h.back} heading={h.groupsTitle} />
      <p>{h.groupsIntro}</p>
      <Table
        caption={h.groupsCaption}
        rows={data.groups}
        empty={h.noGroups}
        columns={[
          { label: h.group, wrap: true, cell: (g) => g.display_name },
          { label: h.connectionColumn, wrap: true, cell: (g) => g.connection_name },
          { label: h.externalId, wrap: true, cell: (g) => (g.external_id ? <code>{g.external_id}</code> : '—') },
          {
            label: h.roles,
            wrap: true,
            cell: (g) =>
              g.role_ids.length === 0
                ? h.noRoles
                : g.role_ids
                    .map((id) => {
                      const r = byId.get(id);
                      return r ? roleLabel(r) : id;
                    })
                    .join(', '),
          },
          {
            label: pageEnv().t.console.common.action,
            cell: (g) => (
              <a href={`/admin/scim-groups/${g.id}`} aria-label={h.editRolesOf(g.display_name)}>
                {h.editRoles}
              </a>
            ),
          },
        ]}
      />
    </>,
  );
}

export function renderGroupRoles(
  frame: ConsoleFrame,
  data: { group: ScimGroupRoles; roles: RoleChoice[]; checked: readonly string[]; errors: FieldErrors },
): string {
  const g = data.group;
  const { scim: h } = pageEnv().t.console;
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/scim-groups" label={h.backToGroups} heading={h.groupNamed(g.display_name)} />
      <Facts
        items={[
          [h.connectionColumn, g.connection_name],
          [h.externalId, g.external_id ? <code>{g.external_id}</code> : '—'],
        ]}
      />
      <PostForm action={`/admin/scim-groups/${g.id}`} csrf={frame.csrf}>
        {/* Mapped roles this caller may not hand out (GET /api/users/roles/assignable leaves them out) are kept as they are. */}
        {g.role_ids
          .filter((id) => !data.roles.some((r) => r.id === id))
          .map((id) => (
            <input type="hidden" name="role_ids" value={id} />
          ))}
        {data.roles.length === 0 ? (
          <p>{h.noAssignableRoles}</p>
        ) : (
          <Checkboxes
            name="role_ids"
            legend={h.rolesLegend}
            hint={h.rolesHint}
            options={data.roles.map((r) => ({ value: r.id, label: roleLabel(r) }))}
            checked={data.checked}
            errors={data.errors}
          />
        )}
        <Submit label={h.saveRoles} />
      </PostForm>
    </>,
  );
}
