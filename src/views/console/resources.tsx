import type { ApiResourceRow } from '../../db/repositories/api-resources.repo';
import { Actions, Time } from '../kit';
import { ActionButton, Checkbox, CopyValue, Facts, Field, PostForm, Table, TextArea, type FieldErrors } from './components';
import { renderConsole, type ConsoleFrame } from './layout';

/** API resources (CONTRACT §12, RFC 8707): the APIs that accept this server's RFC 9068 access tokens. */

export function renderResources(frame: ConsoleFrame, data: { resources: ApiResourceRow[]; canWrite: boolean }): string {
  return renderConsole(
    frame,
    <>
      <h1>API resources</h1>
      <p>
        The APIs that accept this server's access tokens. An application allowed to use one asks for a token with{' '}
        <code>resource=&lt;identifier&gt;</code> and gets a signed JWT whose audience is that API.
      </p>
      {data.canWrite ? (
        <p>
          <a class="button" href="/admin/api-resources/new">
            Register an API
          </a>
        </p>
      ) : null}
      <Table
        caption="Registered APIs"
        rows={data.resources}
        empty={
          data.canWrite ? (
            <>
              No API resources yet — <a href="/admin/api-resources/new">register one</a>.
            </>
          ) : (
            'No API resources yet.'
          )
        }
        columns={[
          { label: 'Name', cell: (r) => <a href={`/admin/api-resources/${r.id}`}>{r.name}</a> },
          { label: 'Identifier', wrap: true, cell: (r) => <code>{r.identifier}</code> },
          { label: 'Scopes', wrap: true, cell: (r) => (r.scopes.length ? r.scopes.join(' ') : '—') },
          { label: 'Token lifetime', cell: (r) => `${r.accessTokenTtlSeconds} s` },
          { label: 'Self-registered apps', cell: (r) => (r.openRegistration ? 'Allowed' : 'No') },
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
}

export function renderResourceForm(
  frame: ConsoleFrame,
  data: { resource?: ApiResourceRow; values: ResourceValues; errors: FieldErrors; canWrite: boolean },
): string {
  const r = data.resource;
  const v = data.values;
  return renderConsole(
    frame,
    <>
      <p>
        <a href="/admin/api-resources">← API resources</a>
      </p>
      <h1>{r ? r.name : 'Register an API'}</h1>
      {r ? (
        <Facts
          items={[
            ['Identifier (audience)', <CopyValue id="identifier" label="identifier" value={r.identifier} />],
            ['Created', <Time at={r.createdAt} />],
            ['Changed', <Time at={r.updatedAt} />],
          ]}
        />
      ) : null}
      {data.canWrite ? (
        <PostForm action={r ? `/admin/api-resources/${r.id}` : '/admin/api-resources'} csrf={frame.csrf}>
          <Field
            name="identifier"
            label="Identifier"
            type="url"
            value={v.identifier}
            errors={data.errors}
            required
            hint="An absolute URI without a fragment, usually the API's base URL (https://api.example.com/). It becomes the aud claim of its tokens."
          />
          <Field name="name" label="Name" value={v.name} errors={data.errors} required hint="Shown on consent screens." />
          <TextArea
            name="scopes"
            label="Scopes"
            value={v.scopes}
            errors={data.errors}
            hint="The permissions this API defines, separated by spaces or lines (invoices:read invoices:write)."
          />
          <Field
            name="access_token_ttl_s"
            label="Access token lifetime (seconds)"
            type="number"
            min={60}
            max={3600}
            value={v.access_token_ttl_s}
            errors={data.errors}
            hint="60 to 3600."
          />
          <Checkbox
            name="open_registration"
            label="Self-registered apps may ask for it"
            checked={v.open_registration}
            hint="Whether dynamically registered (MCP) clients may ask tokens for this API."
          />
          <Actions>
            <button type="submit">{r ? 'Save API resource' : 'Register API'}</button>
          </Actions>
        </PostForm>
      ) : r ? (
        <Facts
          items={[
            ['Scopes', r.scopes.join(' ') || '—'],
            ['Token lifetime', `${r.accessTokenTtlSeconds} s`],
            ['Self-registered apps', r.openRegistration ? 'Allowed' : 'Not allowed'],
          ]}
        />
      ) : null}
      {r && data.canWrite ? (
        <Actions>
          <ActionButton action={`/admin/api-resources/${r.id}/delete`} csrf={frame.csrf} label="Delete API resource" danger />
        </Actions>
      ) : null}
    </>,
  );
}
