import type { Knex } from 'knex';
import * as createSchema from './20261121000000_create_schema';
import * as addSessionAuthContext from './20261122000000_add_session_auth_context';
import * as addRefreshTokenSuccessor from './20261122080000_add_refresh_token_successor';
import * as addOpenIdConnect from './20261122110000_add_openid_connect';
import * as createMfaTables from './20261122120000_create_mfa_tables';
import * as createAuditEvents from './20261122130000_create_audit_events';
import * as createSetupToken from './20261122130001_create_setup_token';
import * as addOAuthClientVersion from './20261123000000_add_oauth_client_version';
import * as addTotpPendingSession from './20261126100000_add_totp_pending_session';
import * as dropOAuthClientVersion from './20261126120000_drop_oauth_client_version';
import * as addClientTypesAndDeviceGrant from './20261126140000_add_client_types_and_device_grant';
import * as createWebhooks from './20261126160000_create_webhooks';
import * as createIdentityProviders from './20261126170000_create_identity_providers';
import * as addDynamicClientRegistration from './20261126180000_add_dynamic_client_registration';
import * as addMetadataDocumentRegistration from './20261126190000_add_metadata_document_registration';
import * as addConsoleScaleIndexes from './20261126200000_add_console_scale_indexes';
import * as addMetadataDocumentClientExpiryIndex from './20261126213000_add_metadata_document_client_expiry_index';
import * as addClientRegistrationMode from './20261126213100_add_client_registration_mode';
import * as federationTrust from './20261129100000_federation_trust';
import * as bindIdpLinkToSession from './20261129101000_bind_idp_link_to_session';
import * as bindGrantsToConsent from './20261129110000_bind_grants_to_consent';
import * as createSaml from './20261129150000_create_saml';
import * as createScim from './20261129160000_create_scim';
import * as createSettings from './20261129170000_create_settings';
import * as settingsPermission from './20261129171000_settings_permission';
import * as flagPrivilegedIdentities from './20261130100000_flag_privileged_identities';
import * as addClientAllowedOrigins from './20261130120000_add_client_allowed_origins';
import * as addUserInvitation from './20261130121000_add_user_invitation';
import * as samlEncryptionCertificate from './20261130130000_saml_encryption_certificate';
import * as scimFilterIndexes from './20261130140000_scim_filter_indexes';
import * as addPrivateKeyJwt from './20261130150000_add_private_key_jwt';
import * as createPushedAuthorizationRequests from './20261130151000_create_pushed_authorization_requests';
import * as createEmailSignIn from './20261130160000_create_email_sign_in';
import * as addDpopBoundAccessTokens from './20261201100000_add_dpop_bound_access_tokens';
import * as backchannelLogout from './20261201110000_backchannel_logout';
import * as roleApiScopes from './20261201120000_role_api_scopes';
import * as auditEventNames from './20261201121000_audit_event_names';
import * as addDpopJkt from './20261202100000_add_dpop_jkt';
import * as tokenExchangeSessions from './20261202110000_token_exchange_sessions';
import * as backchannelLogoutOnDelete from './20261202120000_backchannel_logout_on_delete';
import * as permissionDescriptions from './20261202130000_permission_descriptions';
import * as exchangedSessionsSendNoLogout from './20261202170000_exchanged_sessions_send_no_logout';
import * as notifyClientChanges from './20261203160000_notify_client_changes';
import * as sessionResource from './20261205200000_session_resource';

/**
 * Migrations are listed here (in order) rather than discovered on disk, so that the same list runs under
 * tsx, ts-jest and compiled JavaScript. Add new files to the end; never edit one that has landed.
 */
const MIGRATIONS: Array<[string, Knex.Migration]> = [
  ['20261121000000_create_schema', createSchema],
  ['20261122000000_add_session_auth_context', addSessionAuthContext],
  ['20261122080000_add_refresh_token_successor', addRefreshTokenSuccessor],
  ['20261122110000_add_openid_connect', addOpenIdConnect],
  ['20261122120000_create_mfa_tables', createMfaTables],
  ['20261122130000_create_audit_events', createAuditEvents],
  ['20261122130001_create_setup_token', createSetupToken],
  ['20261123000000_add_oauth_client_version', addOAuthClientVersion],
  ['20261126100000_add_totp_pending_session', addTotpPendingSession],
  ['20261126120000_drop_oauth_client_version', dropOAuthClientVersion],
  ['20261126140000_add_client_types_and_device_grant', addClientTypesAndDeviceGrant],
  ['20261126160000_create_webhooks', createWebhooks],
  ['20261126170000_create_identity_providers', createIdentityProviders],
  ['20261126180000_add_dynamic_client_registration', addDynamicClientRegistration],
  ['20261126190000_add_metadata_document_registration', addMetadataDocumentRegistration],
  ['20261126200000_add_console_scale_indexes', addConsoleScaleIndexes],
  ['20261126213000_add_metadata_document_client_expiry_index', addMetadataDocumentClientExpiryIndex],
  ['20261126213100_add_client_registration_mode', addClientRegistrationMode],
  ['20261129100000_federation_trust', federationTrust],
  ['20261129101000_bind_idp_link_to_session', bindIdpLinkToSession],
  ['20261129110000_bind_grants_to_consent', bindGrantsToConsent],
  ['20261129150000_create_saml', createSaml],
  ['20261129160000_create_scim', createScim],
  ['20261129170000_create_settings', createSettings],
  ['20261129171000_settings_permission', settingsPermission],
  ['20261130100000_flag_privileged_identities', flagPrivilegedIdentities],
  ['20261130120000_add_client_allowed_origins', addClientAllowedOrigins],
  ['20261130121000_add_user_invitation', addUserInvitation],
  ['20261130130000_saml_encryption_certificate', samlEncryptionCertificate],
  ['20261130140000_scim_filter_indexes', scimFilterIndexes],
  ['20261130150000_add_private_key_jwt', addPrivateKeyJwt],
  ['20261130151000_create_pushed_authorization_requests', createPushedAuthorizationRequests],
  ['20261130160000_create_email_sign_in', createEmailSignIn],
  ['20261201100000_add_dpop_bound_access_tokens', addDpopBoundAccessTokens],
  ['20261201110000_backchannel_logout', backchannelLogout],
  ['20261201120000_role_api_scopes', roleApiScopes],
  ['20261201121000_audit_event_names', auditEventNames],
  ['20261202100000_add_dpop_jkt', addDpopJkt],
  ['20261202110000_token_exchange_sessions', tokenExchangeSessions],
  ['20261202120000_backchannel_logout_on_delete', backchannelLogoutOnDelete],
  ['20261202130000_permission_descriptions', permissionDescriptions],
  ['20261202170000_exchanged_sessions_send_no_logout', exchangedSessionsSendNoLogout],
  ['20261203160000_notify_client_changes', notifyClientChanges],
  ['20261205200000_session_resource', sessionResource],
];

export const migrationSource: Knex.MigrationSource<[string, Knex.Migration]> = {
  getMigrations: async () => MIGRATIONS,
  getMigrationName: ([name]) => name,
  getMigration: async ([, migration]) => migration,
};
