import type { ApiResource } from '../../wire/admin/admin.schemas';
import { pageEnv } from '../env';
import { Actions, Submit, Time } from '../kit';
import { ActionButton, bindForm, Checkbox, CopyValue, Facts, Field, PostForm, Table, TextArea, type FieldErrors } from './components';
import { BackLink, CreateButton, NoneYet } from './list';
import { renderConsole, type ConsoleFrame } from './layout';

/** API resources (CONTRACT §12, RFC 8707): the APIs that accept this server's RFC 9068 access tokens. */

export function renderResources(frame: ConsoleFrame, data: { resources: ApiResource[]; canWrite: boolean }): string {
  const { resources: x, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <>
      <h1>{x.title}</h1>
      <p>
        {x.introBefore} <code>resource=&lt;identifier&gt;</code> {x.introAfter}
      </p>
      {data.canWrite ? <CreateButton href="/admin/api-resources/new" label={x.register} /> : null}
      <Table
        caption={x.caption}
        rows={data.resources}
        empty={data.canWrite ? <NoneYet text={x.noneYet} href="/admin/api-resources/new" link={x.registerOne} /> : x.noneYetPlain}
        columns={[
          { label: k.name, cell: (r) => <a href={`/admin/api-resources/${r.id}`}>{r.name}</a> },
          { label: x.identifier, wrap: true, cell: (r) => <code>{r.identifier}</code> },
          { label: x.scopes, wrap: true, cell: (r) => (r.scopes.length ? r.scopes.join(' ') : '—') },
          { label: x.tokenLifetime, cell: (r) => x.seconds(r.access_token_ttl_s) },
          { label: x.selfRegistered, cell: (r) => (r.open_registration ? x.allowed : k.no) },
        ]}
      />
    </>,
  );
}

/** The fields of the form, as typed (mapped onto the API body in the router). */
export interface ResourceValues {
  identifier: string;
  name: string;
  scopes: string;
  access_token_ttl_s: string;
  open_registration: boolean;
  /** Issue 34: every access token for the API must be DPoP-bound (RFC 9449). */
  dpop_bound_access_tokens: boolean;
  /** Issue 32: people's tokens carry only the scopes their roles grant (docs/rbac.md). */
  role_based_access: boolean;
}

export function renderResourceForm(
  frame: ConsoleFrame,
  data: { resource?: ApiResource; values: ResourceValues; errors: FieldErrors; canWrite: boolean },
): string {
  const r = data.resource;
  const v = data.values;
  const bound = bindForm(v, data.errors);
  const { resources: x, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/api-resources" label={x.back} heading={r ? r.name : x.register} />
      {r ? (
        <Facts
          items={[
            [x.identifierAudience, <CopyValue id="identifier" label={x.identifierLower} value={r.identifier} />],
            [k.created, <Time at={r.created_at} />],
            [x.changed, <Time at={r.updated_at} />],
          ]}
        />
      ) : null}
      {data.canWrite ? (
        <PostForm action={r ? `/admin/api-resources/${r.id}` : '/admin/api-resources'} csrf={frame.csrf}>
          <Field {...bound('identifier')} label={x.identifier} type="url" required hint={x.identifierHint} />
          <Field {...bound('name')} label={k.name} required hint={x.nameHint} />
          <TextArea {...bound('scopes')} label={x.scopes} hint={x.scopesHint} />
          <Field {...bound('access_token_ttl_s')} label={x.ttl} type="number" min={60} max={3600} hint={x.ttlHint} />
          <Checkbox name="open_registration" label={x.openRegistration} checked={v.open_registration} hint={x.openRegistrationHint} />
          <Checkbox name="role_based_access" label={x.roleBasedAccess} checked={v.role_based_access} hint={x.roleBasedAccessHint} />
          <Checkbox name="dpop_bound_access_tokens" label={x.dpop} checked={v.dpop_bound_access_tokens} hint={x.dpopHint} />
          <Submit label={r ? x.save : x.registerButton} />
        </PostForm>
      ) : r ? (
        <Facts
          items={[
            [x.scopes, r.scopes.join(' ') || '—'],
            [x.tokenLifetime, x.seconds(r.access_token_ttl_s)],
            [x.selfRegistered, r.open_registration ? x.allowed : x.notAllowed],
            [x.roleBasedAccess, r.role_based_access ? k.on : k.off],
            [x.dpop, r.dpop_bound_access_tokens ? k.yes : k.no],
          ]}
        />
      ) : null}
      {r && data.canWrite ? (
        <Actions>
          <ActionButton action={`/admin/api-resources/${r.id}/delete`} csrf={frame.csrf} label={x.delete} danger />
        </Actions>
      ) : null}
    </>,
  );
}
