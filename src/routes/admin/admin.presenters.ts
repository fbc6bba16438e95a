import type { OAuthClientRow } from '../../db/repositories/oauth-clients.repo';
import type { AdminSummary } from '../../services/admin.service';

/** OAuth client (CONTRACT §6). Listed field by field: the secret hash can never appear (spec §2.6). */
export function presentClient(client: OAuthClientRow) {
  return {
    client_id: client.clientId,
    name: client.name,
    redirect_uris: client.redirectUris,
    scopes: client.scopes,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    is_active: client.isActive,
    created_at: client.createdAt,
    updated_at: client.updatedAt,
  };
}

export function presentSummary(summary: AdminSummary) {
  return {
    users: summary.users,
    active_users: summary.activeUsers,
    clients: summary.clients,
    active_clients: summary.activeClients,
    roles: summary.roles,
    admins: summary.admins,
  };
}
