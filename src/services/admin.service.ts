import { countClients } from '../db/repositories/oauth-clients.repo';
import { countActiveRoles } from '../db/repositories/roles.repo';
import { countUsers } from '../db/repositories/users.repo';
import type { ServiceContext } from './context';
import { countAdminUsers } from './role-assignment.service';

export interface AdminSummary {
  users: number;
  activeUsers: number;
  clients: number;
  activeClients: number;
  /** Active roles, global and application-scoped. */
  roles: number;
  /** Active users holding an active global admin-tier role, as listed by GET /api/rbac/admin-users. */
  admins: number;
}

export async function getSummary(ctx: ServiceContext): Promise<AdminSummary> {
  const [users, clients, roles, admins] = await Promise.all([
    countUsers(ctx.db),
    countClients(ctx.db),
    countActiveRoles(ctx.db),
    countAdminUsers(ctx),
  ]);
  return {
    users: users.total,
    activeUsers: users.active,
    clients: clients.total,
    activeClients: clients.active,
    roles,
    admins,
  };
}
