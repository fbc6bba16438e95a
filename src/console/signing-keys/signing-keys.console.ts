import { redirect } from '../../http/outcome';
import { signingKeysApi as api } from '../../routes/admin/admin.router';
import { declareRouter } from '../../routes/route';
import type { RouteDeps } from '../../routes/types';
import { SUPER_ADMIN } from '../../services/rbac-policy';
import * as views from '../../views/console/pages';
import { pageEnv } from '../../views/env';
import { consoleAction, consolePage, consoleSection } from '../action';

/** The signing keys (CONTRACT §9, §14), built from GET /api/admin/signing-keys and its rotate (super_admin, asks first). */
const k = () => pageEnv().t.console.keys;

export function createConsoleSigningKeysRouter(deps: RouteDeps) {
  const routes = consoleSection('signing-keys', deps.ctx, [
    consoleAction(api.list, {
      path: '/signing-keys',
      done: (r, { principal }) =>
        consolePage(views.renderSigningKeys, { keys: r.keys, canRotate: principal.roleNames.includes(SUPER_ADMIN) }, k().title),
    }),
    consoleAction(api.rotate, {
      path: '/signing-keys/rotate',
      confirm: () => ({ title: k().rotateTitle, text: k().rotateText, button: k().rotate }),
      back: () => '/admin/signing-keys',
      done: (r) => redirect('/admin/signing-keys', k().rotated(r.kid)),
    }),
  ]);
  return declareRouter(deps, routes, { tags: ['Console'] });
}
