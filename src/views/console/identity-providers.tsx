import type { IdentityProviderRow } from '../../db/repositories/identity-providers.repo';
import { Actions, Hidden, Time } from '../kit';
import { ActionButton, Badge, Checkbox, CopyValue, Facts, Field, PostForm, Table, type FieldErrors } from './components';
import { renderConsole, type ConsoleFrame } from './layout';

/** Identity providers (CONTRACT §16): the upstream OpenID Connect and GitHub sign-ins that /login offers. */

/** What "Add a provider" offers: OpenID Connect by issuer, the presets, GitHub. */
export const PROVIDER_KINDS = ['oidc', 'google', 'microsoft', 'gitlab', 'github'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

const KIND_LABEL: Record<ProviderKind, { title: string; hint: string }> = {
  oidc: {
    title: 'OpenID Connect',
    hint: 'Any OpenID provider, by its issuer URL (Keycloak, Okta, Auth0, Authentik, another instance of this server).',
  },
  google: { title: 'Google', hint: 'Google accounts and Google Workspace.' },
  microsoft: { title: 'Microsoft', hint: 'Microsoft Entra ID (work and school accounts) of one tenant.' },
  gitlab: { title: 'GitLab', hint: 'gitlab.com accounts (for a self-managed GitLab, use OpenID Connect with its URL).' },
  github: { title: 'GitHub', hint: 'github.com or GitHub Enterprise Server (OAuth app).' },
};

export function renderProviders(frame: ConsoleFrame, data: { providers: IdentityProviderRow[] }): string {
  return renderConsole(
    frame,
    <>
      <h1>Identity providers</h1>
      <p>People can sign in with these accounts: the sign-in page shows "Continue with …" for each enabled provider.</p>
      <p>
        <a class="button" href="/admin/identity-providers/new">
          Add a provider
        </a>
      </p>
      <Table
        caption="Upstream identity providers"
        rows={data.providers}
        empty={
          <>
            No identity providers yet — <a href="/admin/identity-providers/new">add one</a>.
          </>
        }
        columns={[
          { label: 'Name', cell: (p) => <a href={`/admin/identity-providers/${p.id}`}>{p.name}</a> },
          { label: 'Slug', cell: (p) => <code>{p.slug}</code> },
          { label: 'Type', cell: (p) => (p.type === 'github' ? 'GitHub' : 'OpenID Connect') },
          { label: 'Issuer or URL', wrap: true, cell: (p) => p.issuer ?? p.baseUrl ?? '—' },
          { label: 'Status', cell: (p) => <Badge on={p.enabled} yes="Enabled" no="Disabled" /> },
        ]}
      />
    </>,
  );
}

export function renderProviderKinds(frame: ConsoleFrame): string {
  return renderConsole(
    frame,
    <>
      <p>
        <a href="/admin/identity-providers">← Identity providers</a>
      </p>
      <h1>Add an identity provider</h1>
      <p>Choose the kind of provider. You need an OAuth application registered at the provider: its client ID and secret.</p>
      <ul class="choices">
        {PROVIDER_KINDS.map((kind) => (
          <li>
            <a href={`/admin/identity-providers/new?kind=${kind}`}>{KIND_LABEL[kind].title}</a>
            <span class="hint">{KIND_LABEL[kind].hint}</span>
          </li>
        ))}
      </ul>
    </>,
  );
}

/** The form's fields as typed; the client secret is never among them (write-only, never shown again). */
export interface ProviderValues {
  kind: ProviderKind;
  slug: string;
  name: string;
  issuer: string;
  base_url: string;
  api_base_url: string;
  client_id: string;
  scopes: string;
  enabled: boolean;
  trust_email: boolean;
  allow_signup: boolean;
}

export function renderProviderForm(
  frame: ConsoleFrame,
  data: {
    provider?: IdentityProviderRow;
    values: ProviderValues;
    errors: FieldErrors;
    callbackUrlOf: (slug: string) => string;
    /** The callback URL with `{slug}` in place of the slug. */
    callbackPattern: string;
  },
): string {
  const p = data.provider;
  const v = data.values;
  const isGithub = v.kind === 'github';
  return renderConsole(
    frame,
    <>
      <p>
        <a href="/admin/identity-providers">← Identity providers</a>
      </p>
      <h1>{p ? p.name : `Add ${KIND_LABEL[v.kind].title}`}</h1>
      {p ? (
        <Facts
          items={[
            ['Type', p.type === 'github' ? 'GitHub' : 'OpenID Connect'],
            ['Status', <Badge on={p.enabled} yes="Enabled" no="Disabled" />],
            ['Callback URL', <CopyValue id="callback-url" label="callback URL" value={data.callbackUrlOf(p.slug)} />],
            ['Client secret', p.clientSecretSealed ? 'Set (write-only: it is never shown)' : 'Not set'],
            ['Created', <Time at={p.createdAt} />],
          ]}
        />
      ) : (
        <p>
          The callback URL (redirect URI) to register at the provider follows the slug below:{' '}
          <code>{v.slug ? data.callbackUrlOf(v.slug) : data.callbackPattern}</code>
        </p>
      )}
      <PostForm action={p ? `/admin/identity-providers/${p.id}` : '/admin/identity-providers'} csrf={frame.csrf}>
        {p ? null : <Hidden fields={{ kind: v.kind }} />}
        <Field
          name="slug"
          label="Slug"
          value={v.slug}
          errors={data.errors}
          required
          hint="Lower-case letters, digits and dashes; part of the callback URL (changing it changes the callback URL)."
        />
        <Field
          name="name"
          label="Name"
          value={v.name}
          errors={data.errors}
          required
          hint='Shown on the sign-in page: "Continue with {name}".'
        />
        {isGithub ? (
          <>
            <Field
              name="base_url"
              label="GitHub URL"
              type="url"
              value={v.base_url}
              errors={data.errors}
              hint="https://github.com, or your GitHub Enterprise Server."
            />
            <Field
              name="api_base_url"
              label="GitHub API URL"
              type="url"
              value={v.api_base_url}
              errors={data.errors}
              hint="https://api.github.com, or https://{your server}/api/v3."
            />
          </>
        ) : (
          <Field
            name="issuer"
            label="Issuer"
            type="url"
            value={v.issuer}
            errors={data.errors}
            required
            hint={
              v.kind === 'microsoft'
                ? 'https://login.microsoftonline.com/{tenant id}/v2.0 — the discovery document is fetched and checked when you save.'
                : 'The discovery document ({issuer}/.well-known/openid-configuration) is fetched and checked when you save.'
            }
          />
        )}
        <Field name="client_id" label="Client ID" value={v.client_id} errors={data.errors} required autocomplete="off" />
        <Field
          name="client_secret"
          label="Client secret"
          type="password"
          errors={data.errors}
          required={!p}
          autocomplete="new-password"
          hint={
            p
              ? 'Leave empty to keep the stored secret. It is stored encrypted and never shown.'
              : 'Stored encrypted; it is never shown again.'
          }
        />
        <Field name="scopes" label="Scopes" value={v.scopes} errors={data.errors} hint="Separated by spaces." />
        <Checkbox name="enabled" label="Enabled (offered on the sign-in page)" checked={v.enabled} />
        <Checkbox
          name="trust_email"
          label="Trust the email addresses it verifies"
          checked={v.trust_email}
          hint="Links an existing account with the same verified email automatically. Only for providers whose email verification you trust."
        />
        <Checkbox name="allow_signup" label="New people may create an account through it" checked={v.allow_signup} />
        <Actions>
          <button type="submit">{p ? 'Save provider' : 'Add provider'}</button>
        </Actions>
      </PostForm>
      {p ? (
        <Actions>
          <ActionButton action={`/admin/identity-providers/${p.id}/delete`} csrf={frame.csrf} label="Delete provider" danger />
        </Actions>
      ) : null}
    </>,
  );
}
