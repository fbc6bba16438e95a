import { callbackUrlOf, GITHUB_DEFAULTS, OIDC_DEFAULT_SCOPES } from '../../declarations/identity-providers';
import type { IdentityProviderRow } from '../../db/repositories/identity-providers.repo';
import { createOutboundFetch, outboundRequest, OutboundRefused, type OutboundPolicy } from '../../lib/outbound-http';
import { openIdClient } from '../../lib/openid-client';
import type { ServiceContext } from '../context';

/**
 * The relying-party side of CONTRACT §16, through openid-client 6 (PKCE S256, state, nonce, issuer and audience
 * checks, the id_token's signature through the provider's JWKS) with every request to the provider made by
 * lib/outbound-http.ts. GitHub is OAuth 2.0 without OpenID Connect: openid-client runs its code grant (state, PKCE),
 * then its user and emails API names the person. Nothing here logs a token, code or secret.
 */

/** Who the provider says signed in. */
export interface UpstreamIdentity {
  subject: string;
  email?: string;
  emailVerified: boolean;
  givenName?: string;
  familyName?: string;
  name?: string;
}

/** The provider's answer could not be used: the reason goes to the log, the person sees a generic page. */
export class UpstreamRejected extends Error {
  override name = 'UpstreamRejected';
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

const UPSTREAM_TIMEOUT_MS = 10_000;
const UPSTREAM_MAX_BYTES = 1024 * 1024;

/** The outbound module's refusal behind an error, when openid-client wrapped it (as the `cause` of its own error). */
export function outboundRefusalOf(err: unknown): OutboundRefused | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof OutboundRefused) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Which upstream addresses the server may reach: the runtime settings idp_allow_private and idp_allowed_hosts
 * (CONTRACT §18, docs/federation.md), read anew for every discovery, sign-in and fetch.
 */
export interface UpstreamRules {
  allowPrivate: boolean;
  allowedHosts: readonly string[];
}

export const upstreamRulesOf = (ctx: Pick<ServiceContext, 'settings'>): UpstreamRules => ({
  allowPrivate: ctx.settings.current.values.idp_allow_private,
  allowedHosts: ctx.settings.current.values.idp_allowed_hosts,
});

/** How the server reaches upstream providers under `rules` (docs/federation.md). */
export function upstreamPolicy(rules: UpstreamRules): OutboundPolicy {
  return {
    allowPrivate: rules.allowPrivate,
    allowedHosts: new Set(rules.allowedHosts),
    allowHttp: rules.allowPrivate,
    timeoutMs: UPSTREAM_TIMEOUT_MS,
    maxBytes: UPSTREAM_MAX_BYTES,
  };
}

export { callbackUrlOf, GITHUB_DEFAULTS, OIDC_DEFAULT_SCOPES };

function clientSecretOf(ctx: ServiceContext, provider: IdentityProviderRow): string | undefined {
  return provider.clientSecretSealed ? ctx.sealer.open(provider.clientSecretSealed, clientSecretPurpose(provider.id)) : undefined;
}

/** lib/sealed.ts purpose of a provider's client secret: a value sealed for one provider opens for no other. */
export function clientSecretPurpose(providerId: string): string {
  return `idp-client-secret:${providerId}`;
}

type Configuration = InstanceType<ReturnType<typeof openIdClient>['Configuration']>;

/** Discovery of an OpenID provider (issuer checked by openid-client: it must equal the configured one exactly). */
export async function discoverOidc(
  rules: UpstreamRules,
  issuer: string,
  clientId: string,
  clientSecret: string | undefined,
): Promise<Configuration> {
  const client = openIdClient();
  const insecure = new URL(issuer).protocol === 'http:';
  const configuration = await client.discovery(new URL(issuer), clientId, clientSecret, undefined, {
    [client.customFetch]: createOutboundFetch(upstreamPolicy(rules)) as never,
    execute: insecure ? [client.allowInsecureRequests] : [],
    timeout: UPSTREAM_TIMEOUT_MS / 1000,
  });
  if (clientSecret === undefined) return configuration;
  // RFC 8414 §2: without a list, client_secret_basic is the default; a provider that lists post but not basic gets post.
  const methods = configuration.serverMetadata().token_endpoint_auth_methods_supported;
  const post = methods !== undefined && !methods.includes('client_secret_basic') && methods.includes('client_secret_post');
  const auth = post ? client.ClientSecretPost(clientSecret) : client.ClientSecretBasic(clientSecret);
  return new client.Configuration(configuration.serverMetadata(), clientId, clientSecret, auth);
}

const githubBaseOf = (provider: IdentityProviderRow) => (provider.baseUrl ?? GITHUB_DEFAULTS.baseUrl).replace(/\/+$/, '');

/**
 * The origin of each provider's authorization endpoint, learnt at every discovery, for the CSP form-action of a page
 * whose form starts a round trip (issue 30). Keyed by provider and issuer, so a changed issuer is discovered again.
 */
const authorizationOrigins = new Map<string, { origin: string; until: number }>();
const ORIGIN_TTL_MS = 10 * 60 * 1000;
const ORIGIN_LOOKUP_MS = 3000;
const originKeyOf = (provider: IdentityProviderRow) => `${provider.id} ${provider.issuer ?? ''}`;

function rememberAuthorizationOrigin(ctx: ServiceContext, provider: IdentityProviderRow, origin: string): void {
  if (authorizationOrigins.size > 1000) authorizationOrigins.clear();
  authorizationOrigins.set(originKeyOf(provider), { origin, until: ctx.clock.now().getTime() + ORIGIN_TTL_MS });
}

/** An OpenID Connect provider's issuer (providers.service.ts fieldsOf gives every one an issuer, a GitHub one none). */
function oidcIssuerOf(provider: IdentityProviderRow): string {
  if (!provider.issuer) throw new Error(`identity provider ${provider.slug} has no issuer`);
  return provider.issuer;
}

/**
 * Where a round trip with `provider` sends the browser (its authorization endpoint's origin): GitHub's base URL, else
 * the discovered endpoint (remembered 10 minutes). When discovery fails or takes over 3 s, the issuer's origin: the
 * round trip itself would fail on the same discovery, so nothing that works is blocked.
 */
export async function authorizationOriginOf(ctx: ServiceContext, provider: IdentityProviderRow): Promise<string> {
  if (provider.type !== 'oidc') return new URL(githubBaseOf(provider)).origin;
  const fallback = new URL(oidcIssuerOf(provider)).origin;
  const known = authorizationOrigins.get(originKeyOf(provider));
  if (known && known.until > ctx.clock.now().getTime()) return known.origin;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ORIGIN_LOOKUP_MS, undefined)));
  const discovered = configurationOf(ctx, provider).then(
    (c) => c.serverMetadata().authorization_endpoint,
    () => undefined,
  );
  const endpoint = await Promise.race([discovered, late]).finally(() => clearTimeout(timer));
  return endpoint ? new URL(endpoint).origin : fallback;
}

/** The configuration of one provider, ready for an authorization URL or a code grant. */
async function configurationOf(ctx: ServiceContext, provider: IdentityProviderRow): Promise<Configuration> {
  const client = openIdClient();
  const secret = clientSecretOf(ctx, provider);
  let configuration: Configuration;
  if (provider.type === 'oidc') {
    configuration = await discoverOidc(upstreamRulesOf(ctx), oidcIssuerOf(provider), provider.clientId, secret);
    // The id_token comes straight from the token endpoint; its signature is checked against the JWKS all the same.
    client.enableNonRepudiationChecks(configuration);
  } else {
    const base = githubBaseOf(provider);
    configuration = new client.Configuration(
      { issuer: base, authorization_endpoint: `${base}/login/oauth/authorize`, token_endpoint: `${base}/login/oauth/access_token` },
      provider.clientId,
      secret,
      client.ClientSecretPost(secret),
    );
  }
  configuration[client.customFetch] = createOutboundFetch(upstreamPolicy(upstreamRulesOf(ctx))) as never;
  configuration.timeout = UPSTREAM_TIMEOUT_MS / 1000;
  const endpoint = configuration.serverMetadata().authorization_endpoint;
  if (endpoint) rememberAuthorizationOrigin(ctx, provider, new URL(endpoint).origin);
  if (new URL(configuration.serverMetadata().issuer).protocol === 'http:') client.allowInsecureRequests(configuration);
  return configuration;
}

/** The provider's authorization URL for one round trip (PKCE S256 challenge, state, nonce for OpenID providers). */
export async function authorizationUrlFor(
  ctx: ServiceContext,
  provider: IdentityProviderRow,
  round: { state: string; nonce: string; codeVerifier: string },
): Promise<string> {
  const client = openIdClient();
  const configuration = await configurationOf(ctx, provider);
  const params: Record<string, string> = {
    redirect_uri: callbackUrlOf(ctx.config, provider.slug),
    scope: provider.scopes,
    state: round.state,
    code_challenge: await client.calculatePKCECodeChallenge(round.codeVerifier),
    code_challenge_method: 'S256',
  };
  if (provider.type === 'oidc') params.nonce = round.nonce;
  return client.buildAuthorizationUrl(configuration, params).href;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

/**
 * An `email` claim exactly as sent (never trimmed or repaired): the sign-in service accepts it only when it is one
 * valid address (CONTRACT §23). Absent or empty is no claim; anything that is not a string can never be an address.
 */
function emailClaim(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The callback: the code exchanged with the round's verifier, the answer checked (state; for OpenID providers the
 * `iss` response parameter, and the id_token's issuer, audience, expiry, nonce and signature), then who signed in.
 */
export async function exchangeCallback(
  ctx: ServiceContext,
  provider: IdentityProviderRow,
  callbackUrl: URL,
  round: { state: string; nonce: string; codeVerifier: string },
): Promise<UpstreamIdentity> {
  const client = openIdClient();
  try {
    const configuration = await configurationOf(ctx, provider);
    if (provider.type === 'oidc') {
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: round.codeVerifier,
        expectedState: round.state,
        expectedNonce: round.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      // idTokenExpected: openid-client refuses a token response without an id_token before this.
      if (!claims) throw new UpstreamRejected('provider answered no id_token');
      let source: Record<string, unknown> = claims;
      // Providers that keep profile claims out of the id_token (OIDC Core §5.4) serve them at userinfo, for this sub.
      if (claims.email === undefined && configuration.serverMetadata().userinfo_endpoint) {
        source = { ...(await client.fetchUserInfo(configuration, tokens.access_token, claims.sub)), ...claims };
      }
      return {
        subject: claims.sub,
        email: emailClaim(source.email),
        emailVerified: source.email_verified === true,
        givenName: text(source.given_name),
        familyName: text(source.family_name),
        name: text(source.name),
      };
    }
    const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: round.codeVerifier,
      expectedState: round.state,
    });
    return await githubIdentity(ctx, provider, tokens.access_token);
  } catch (err) {
    if (err instanceof UpstreamRejected) throw err;
    const refused = outboundRefusalOf(err);
    if (refused) throw new UpstreamRejected(`provider unreachable: ${refused.message}`, refused.reason);
    const e = err as { message?: string; code?: string; error?: string };
    // openid-client's messages name the failed check, never a token's value.
    throw new UpstreamRejected(e.error ? `provider answered ${e.error}` : (e.message ?? 'unknown failure'), e.code ?? e.error);
  }
}

async function githubApi(ctx: ServiceContext, provider: IdentityProviderRow, path: string, accessToken: string): Promise<unknown> {
  const api = (provider.apiBaseUrl ?? GITHUB_DEFAULTS.apiBaseUrl).replace(/\/+$/, '');
  const res = await outboundRequest(
    `${api}${path}`,
    {
      headers: {
        Accept: 'application/vnd.github+json',
        Authorization: `Bearer ${accessToken}`,
        'User-Agent': 'service-sso',
        'X-GitHub-Api-Version': '2022-11-28',
      },
    },
    upstreamPolicy(upstreamRulesOf(ctx)),
  );
  if (res.status !== 200) throw new UpstreamRejected(`GitHub API ${path} answered ${res.status}`);
  try {
    return JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new UpstreamRejected(`GitHub API ${path} answered something other than JSON`);
  }
}

/** GitHub's user (its numeric id is the subject) and its primary email, verified or not, from the emails API. */
async function githubIdentity(ctx: ServiceContext, provider: IdentityProviderRow, accessToken: string): Promise<UpstreamIdentity> {
  const user = (await githubApi(ctx, provider, '/user', accessToken)) as { id?: unknown; name?: unknown; login?: unknown };
  if (typeof user?.id !== 'number' && typeof user?.id !== 'string') throw new UpstreamRejected('GitHub /user has no id');
  const emails = await githubApi(ctx, provider, '/user/emails', accessToken);
  const list = Array.isArray(emails) ? (emails as Array<{ email?: unknown; primary?: unknown; verified?: unknown }>) : [];
  const primary = list.find((e) => e.primary === true && typeof e.email === 'string');
  return {
    subject: String(user.id),
    email: emailClaim(primary?.email),
    emailVerified: primary?.verified === true,
    name: text(user.name) ?? text(user.login),
  };
}
