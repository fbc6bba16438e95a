/**
 * Knex's table map (docs/architecture.md, "Typed rows"): every table a repository reads through the query builder, with
 * its record (the columns as pg returns them), declared once beside the repository's functions: a record type, or the
 * column map of the repository's table (`RecordOf<typeof users.columns>`). From here `db('users')`
 * is typed everywhere. Types only: nothing of this file is emitted.
 */
import type { JsonColumns } from '.';
import type { RecordOf } from './rows';
import type { ApiResourceRecord } from './repositories/api-resources.repo';
import type { AuditEventRecord } from './repositories/audit-events.repo';
import type { backchannelDeliveries } from './repositories/backchannel-logout.repo';
import type { EmailSignInRecord } from './repositories/email-sign-in.repo';
import type { identityProviders } from './repositories/identity-providers.repo';
import type { PendingLinkRecord } from './repositories/idp-flows.repo';
import type { LoginTokenRecord } from './repositories/login-tokens.repo';
import type { RecoveryCodeRecord } from './repositories/mfa-recovery-codes.repo';
import type { MfaTokenRecord } from './repositories/mfa-tokens.repo';
import type { TotpRecord } from './repositories/mfa-totp.repo';
import type { OAuthClientRecord } from './repositories/oauth-clients.repo';
import type { AuthorizationCodeRecord } from './repositories/oauth-codes.repo';
import type { DeviceCodeRecord } from './repositories/oauth-device-codes.repo';
import type { oauthGrants } from './repositories/oauth-grants.repo';
import type { AuthorizationRequestRecord } from './repositories/oauth-requests.repo';
import type { PushedRequestRecord } from './repositories/pushed-requests.repo';
import type { registrationTokens } from './repositories/registration-tokens.repo';
import type { samlApps } from './repositories/saml-apps.repo';
import type { samlRequests } from './repositories/saml-flows.repo';
import type { samlKeys } from './repositories/saml-keys.repo';
import type { ScimGroupMemberRecord, ScimGroupRoleRecord, scimConnections, scimGroups } from './repositories/scim.repo';
import type { SessionRecord } from './repositories/sessions.repo';
import type { SettingsVersionRecord } from './repositories/settings.repo';
import type { SetupTokenRecord } from './repositories/setup-token.repo';
import type { signingKeys } from './repositories/signing-keys.repo';
import type { userIdentities } from './repositories/user-identities.repo';
import type { UserRecord } from './repositories/users.repo';
import type { passkeys } from './repositories/webauthn-credentials.repo';
import type { webhookDeliveries, webhookSubscriptions } from './repositories/webhooks.repo';

declare module 'knex/types/tables' {
  interface Tables {
    api_resources: JsonColumns<ApiResourceRecord, 'scopes'>;
    audit_events: AuditEventRecord;
    backchannel_logout_deliveries: RecordOf<typeof backchannelDeliveries.columns>;
    email_sign_in_requests: EmailSignInRecord;
    identity_providers: RecordOf<typeof identityProviders.columns>;
    idp_pending_links: PendingLinkRecord;
    login_tokens: LoginTokenRecord;
    mfa_recovery_codes: RecoveryCodeRecord;
    mfa_tokens: MfaTokenRecord;
    mfa_totp: TotpRecord;
    oauth_authorization_requests: AuthorizationRequestRecord;
    oauth_clients: OAuthClientRecord;
    oauth_codes: AuthorizationCodeRecord;
    oauth_device_codes: DeviceCodeRecord;
    oauth_grants: JsonColumns<RecordOf<typeof oauthGrants.columns>, 'resources' | 'redirect_uris'>;
    oauth_pushed_requests: JsonColumns<PushedRequestRecord, 'params'>;
    oidc_signing_keys: RecordOf<typeof signingKeys.columns>;
    registration_tokens: RecordOf<typeof registrationTokens.columns>;
    saml_apps: JsonColumns<RecordOf<typeof samlApps.columns>, 'acs_urls' | 'attributes'>;
    saml_requests: RecordOf<typeof samlRequests.columns>;
    saml_signing_keys: RecordOf<typeof samlKeys.columns>;
    scim_connections: RecordOf<typeof scimConnections.columns>;
    scim_group_members: ScimGroupMemberRecord;
    scim_group_roles: ScimGroupRoleRecord;
    scim_groups: RecordOf<typeof scimGroups.columns>;
    sessions: SessionRecord;
    settings_version: SettingsVersionRecord;
    setup_token: SetupTokenRecord;
    user_identities: RecordOf<typeof userIdentities.columns>;
    users: UserRecord;
    webauthn_credentials: RecordOf<typeof passkeys.columns>;
    webhook_deliveries: RecordOf<typeof webhookDeliveries.columns>;
    webhook_subscriptions: RecordOf<typeof webhookSubscriptions.columns>;
  }
}
