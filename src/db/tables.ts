/**
 * Knex's table map (docs/architecture.md, "Typed rows"): every table a repository reads through the query builder, with
 * its record (the columns as pg returns them), declared once beside the repository's functions. From here `db('users')`
 * is typed everywhere. Types only: nothing of this file is emitted.
 */
import type { JsonColumns } from '.';
import type { ApiResourceRecord } from './repositories/api-resources.repo';
import type { AuditEventRecord } from './repositories/audit-events.repo';
import type { BackchannelDeliveryRecord } from './repositories/backchannel-logout.repo';
import type { EmailSignInRecord } from './repositories/email-sign-in.repo';
import type { IdentityProviderRecord } from './repositories/identity-providers.repo';
import type { PendingLinkRecord } from './repositories/idp-flows.repo';
import type { LoginTokenRecord } from './repositories/login-tokens.repo';
import type { RecoveryCodeRecord } from './repositories/mfa-recovery-codes.repo';
import type { MfaTokenRecord } from './repositories/mfa-tokens.repo';
import type { TotpRecord } from './repositories/mfa-totp.repo';
import type { OAuthClientRecord } from './repositories/oauth-clients.repo';
import type { AuthorizationCodeRecord } from './repositories/oauth-codes.repo';
import type { DeviceCodeRecord } from './repositories/oauth-device-codes.repo';
import type { GrantRecord } from './repositories/oauth-grants.repo';
import type { AuthorizationRequestRecord } from './repositories/oauth-requests.repo';
import type { PushedRequestRecord } from './repositories/pushed-requests.repo';
import type { RegistrationTokenRecord } from './repositories/registration-tokens.repo';
import type { SamlAppRecord } from './repositories/saml-apps.repo';
import type { SamlRequestRecord } from './repositories/saml-flows.repo';
import type { SamlKeyRecord } from './repositories/saml-keys.repo';
import type { ScimConnectionRecord, ScimGroupMemberRecord, ScimGroupRecord, ScimGroupRoleRecord } from './repositories/scim.repo';
import type { SessionRecord } from './repositories/sessions.repo';
import type { SettingsVersionRecord } from './repositories/settings.repo';
import type { SetupTokenRecord } from './repositories/setup-token.repo';
import type { SigningKeyRecord } from './repositories/signing-keys.repo';
import type { UserIdentityRecord } from './repositories/user-identities.repo';
import type { UserRecord } from './repositories/users.repo';
import type { PasskeyRecord } from './repositories/webauthn-credentials.repo';
import type { DeliveryRecord, SubscriptionRecord } from './repositories/webhooks.repo';

declare module 'knex/types/tables' {
  interface Tables {
    api_resources: JsonColumns<ApiResourceRecord, 'scopes'>;
    audit_events: AuditEventRecord;
    backchannel_logout_deliveries: BackchannelDeliveryRecord;
    email_sign_in_requests: EmailSignInRecord;
    identity_providers: IdentityProviderRecord;
    idp_pending_links: PendingLinkRecord;
    login_tokens: LoginTokenRecord;
    mfa_recovery_codes: RecoveryCodeRecord;
    mfa_tokens: MfaTokenRecord;
    mfa_totp: TotpRecord;
    oauth_authorization_requests: AuthorizationRequestRecord;
    oauth_clients: OAuthClientRecord;
    oauth_codes: AuthorizationCodeRecord;
    oauth_device_codes: DeviceCodeRecord;
    oauth_grants: JsonColumns<GrantRecord, 'resources' | 'redirect_uris'>;
    oauth_pushed_requests: JsonColumns<PushedRequestRecord, 'params'>;
    oidc_signing_keys: SigningKeyRecord;
    registration_tokens: RegistrationTokenRecord;
    saml_apps: JsonColumns<SamlAppRecord, 'acs_urls' | 'attributes'>;
    saml_requests: SamlRequestRecord;
    saml_signing_keys: SamlKeyRecord;
    scim_connections: ScimConnectionRecord;
    scim_group_members: ScimGroupMemberRecord;
    scim_group_roles: ScimGroupRoleRecord;
    scim_groups: ScimGroupRecord;
    sessions: SessionRecord;
    settings_version: SettingsVersionRecord;
    setup_token: SetupTokenRecord;
    user_identities: UserIdentityRecord;
    users: UserRecord;
    webauthn_credentials: PasskeyRecord;
    webhook_deliveries: DeliveryRecord;
    webhook_subscriptions: SubscriptionRecord;
  }
}
