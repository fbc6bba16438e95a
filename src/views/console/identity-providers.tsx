import type { IdentityProvider } from '../../wire/federation/identity-providers.schemas';
import { pageEnv } from '../env';
import { Actions, Hidden, Submit, Time } from '../kit';
import { ActionButton, Badge, bindForm, Checkbox, CopyValue, Facts, Field, PostForm, type FieldErrors } from './components';
import { BackLink, ListPage } from './list';
import { renderConsole, type ConsoleFrame } from './layout';

/** Identity providers (CONTRACT §16): the upstream OpenID Connect and GitHub sign-ins that /login offers. */

/** What "Add a provider" offers: OpenID Connect by issuer, the presets, GitHub. */
export const PROVIDER_KINDS = ['oidc', 'google', 'microsoft', 'gitlab', 'github'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

const x = () => pageEnv().t.console.identityProviders;

/** Product names stay as they are; what each kind is for is said in the page's language. */
const KIND_LABEL = (): Record<ProviderKind, { title: string; hint: string }> => ({
  oidc: { title: 'OpenID Connect', hint: x().kindOidcHint },
  google: { title: 'Google', hint: x().kindGoogleHint },
  microsoft: { title: 'Microsoft', hint: x().kindMicrosoftHint },
  gitlab: { title: 'GitLab', hint: x().kindGitlabHint },
  github: { title: 'GitHub', hint: x().kindGithubHint },
});

export function renderProviders(frame: ConsoleFrame, data: { providers: IdentityProvider[] }): string {
  const { identityProviders: i, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <ListPage
      says={i}
      create={{ href: '/admin/identity-providers/new', label: i.add, first: i.addOne }}
      rows={data.providers}
      columns={[
        { label: k.name, cell: (p) => <a href={`/admin/identity-providers/${p.id}`}>{p.name}</a> },
        { label: i.slug, cell: (p) => <code>{p.slug}</code> },
        { label: i.type, cell: (p) => (p.type === 'github' ? 'GitHub' : 'OpenID Connect') },
        { label: i.issuerOrUrl, wrap: true, cell: (p) => p.issuer ?? p.base_url ?? '—' },
        { label: k.status, cell: (p) => <Badge on={p.enabled} yes={i.enabled} no={i.disabled} /> },
      ]}
    />,
  );
}

export function renderProviderKinds(frame: ConsoleFrame): string {
  const i = x();
  const kinds = KIND_LABEL();
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/identity-providers" label={i.back} heading={i.addTitle} />
      <p>{i.chooseKind}</p>
      <ul class="choices">
        {PROVIDER_KINDS.map((kind) => (
          <li>
            <a href={`/admin/identity-providers/new?kind=${kind}`}>{kinds[kind].title}</a>
            <span class="hint">{kinds[kind].hint}</span>
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
    provider?: IdentityProvider;
    values: ProviderValues;
    errors: FieldErrors;
    callbackUrlOf: (slug: string) => string;
    /** The callback URL with `{slug}` in place of the slug. */
    callbackPattern: string;
  },
): string {
  const p = data.provider;
  const v = data.values;
  const bound = bindForm(v, data.errors);
  const isGithub = v.kind === 'github';
  const { identityProviders: i, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/identity-providers" label={i.back} heading={p ? p.name : i.addKind(KIND_LABEL()[v.kind].title)} />
      {p ? (
        <Facts
          items={[
            [i.type, p.type === 'github' ? 'GitHub' : 'OpenID Connect'],
            [k.status, <Badge on={p.enabled} yes={i.enabled} no={i.disabled} />],
            [i.callbackUrl, <CopyValue id="callback-url" label={i.callbackUrlLower} value={p.callback_url} />],
            [i.clientSecret, p.has_client_secret ? i.secretSet : i.secretNotSet],
            [k.created, <Time at={p.created_at} />],
          ]}
        />
      ) : (
        <p>
          {i.callbackIntro} <code>{v.slug ? data.callbackUrlOf(v.slug) : data.callbackPattern}</code>
        </p>
      )}
      <PostForm action={p ? `/admin/identity-providers/${p.id}` : '/admin/identity-providers'} csrf={frame.csrf}>
        {p ? null : <Hidden fields={{ kind: v.kind }} />}
        <Field {...bound('slug')} label={i.slug} required hint={i.slugHint} />
        <Field {...bound('name')} label={k.name} required hint={i.nameHint} />
        {isGithub ? (
          <>
            <Field {...bound('base_url')} label={i.githubUrl} type="url" hint={i.githubUrlHint} />
            <Field {...bound('api_base_url')} label={i.githubApiUrl} type="url" hint={i.githubApiUrlHint} />
          </>
        ) : (
          <Field
            {...bound('issuer')}
            label={i.issuer}
            type="url"
            required
            hint={v.kind === 'microsoft' ? i.issuerHintMicrosoft : i.issuerHint}
          />
        )}
        <p class="hint" id="private-issuer">
          {i.privateIssuer} <a href="/admin/settings#f-idp_allow_private">{i.privateIssuerLink}</a>
        </p>
        <Field {...bound('client_id')} label={i.clientId} required autocomplete="off" />
        <Field
          name="client_secret"
          label={i.clientSecret}
          type="password"
          errors={data.errors}
          required={!p}
          autocomplete="new-password"
          hint={p ? i.secretHintEdit : i.secretHintNew}
        />
        <Field {...bound('scopes')} label={i.scopes} hint={i.scopesHint} />
        <Checkbox name="enabled" label={i.enabledField} checked={v.enabled} />
        <Checkbox name="trust_email" label={i.trustEmail} checked={v.trust_email} hint={i.trustEmailHint} />
        <Checkbox name="allow_signup" label={i.allowSignup} checked={v.allow_signup} />
        <Submit label={p ? i.save : i.addButton} />
      </PostForm>
      {p ? (
        <Actions>
          <ActionButton action={`/admin/identity-providers/${p.id}/delete`} csrf={frame.csrf} label={i.delete} danger />
        </Actions>
      ) : null}
    </>,
  );
}
