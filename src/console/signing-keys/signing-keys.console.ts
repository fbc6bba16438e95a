import { signingKeysApi as api } from '../../routes/admin/admin.router';
import * as views from '../../views/console/pages';
import { consoleAction, consolePage, consoleRouter, pageEnv, redirect } from '../action';

/** The signing keys (CONTRACT §9, §14), built from GET /api/admin/signing-keys and its rotate (super_admin, asks first). */
const k = () => pageEnv().t.console.keys;

export const createConsoleSigningKeysRouter = consoleRouter('signing-keys', () => [
  consoleAction(api.list, {
    path: '/signing-keys',
    done: (r, { allows }) => consolePage(views.renderSigningKeys, { keys: r.keys, canRotate: allows(api.rotate) }, k().title),
  }),
  consoleAction(api.rotate, {
    path: '/signing-keys/rotate',
    confirm: () => ({ title: k().rotateTitle, text: k().rotateText, button: k().rotate }),
    back: () => '/admin/signing-keys',
    done: (r) => redirect('/admin/signing-keys', k().rotated(r.kid)),
  }),
]);
