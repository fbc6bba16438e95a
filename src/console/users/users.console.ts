import { z } from 'zod';
import { redirect } from '../../http/outcome';
import { text } from '../../routes/pages/page-kit';
import { declareRouter } from '../../routes/route';
import type { RouteDeps } from '../../routes/types';
import { usersApi as api } from '../../routes/users/users.router';
import { pageEnv } from '../../views/env';
import { renderInviteUser } from '../../views/console/pages';
import { consoleAction, consoleForm, consolePage, consoleSection } from '../action';

/**
 * The console's user actions (CONTRACT §14), each built from its /api/users endpoint: the same guard, schema, service
 * call and audit event. The list and the user's page are still in src/routes/console/console.router.ts.
 */
const c = () => pageEnv().t.console;
const user = (p: { userId: string }) => `/admin/users/${p.userId}`;
const inviteForm = z.object({ email: text(300), first_name: text(300), last_name: text(300) });

export function createConsoleUsersRouter(deps: RouteDeps) {
  const routes = consoleSection('users', deps.ctx, [
    consoleForm(api.invite, {
      path: '/users/new',
      summary: 'Console: invite a user (form)',
      page: () => consolePage(renderInviteUser, { values: {}, errors: {} }, c().users.invite),
    }),
    consoleAction(api.invite, {
      path: '/users',
      summary: 'Console: invite a user',
      form: inviteForm,
      input: (f) => f,
      field: 'email',
      invalid: ({ values, errors }) => consolePage(renderInviteUser, { values, errors }, c().users.invite),
      done: (r) => redirect(user({ userId: r.user.id }), c().users.invited(r.user.email)),
    }),
    consoleAction(api.deactivate, {
      path: '/users/:userId/deactivate',
      confirm: async ({ call, params }) => ({
        title: c().user.deactivateTitle((await call(api.get, { params })).user.email),
        text: c().user.deactivateText,
        button: c().user.deactivate,
      }),
      back: user,
      done: (_r, { params }) => redirect(user(params), c().user.deactivated),
    }),
    consoleAction(api.revokeSession, {
      path: '/users/:userId/sessions/:sessionId/revoke',
      confirm: () => ({ title: c().user.revokeTitle, text: c().user.revokeText, button: c().user.revokeSessionButton }),
      back: user,
      done: (_r, { params }) => redirect(user(params), c().user.sessionRevoked),
    }),
    consoleAction(api.resendInvitation, {
      path: '/users/:userId/invitation',
      back: user,
      done: (r, { params }) => redirect(user(params), c().user.invitationResent(r.user.email)),
    }),
    consoleAction(api.passwordLink, {
      path: '/users/:userId/password-link',
      back: user,
      done: (_r, { params }) => redirect(user(params), c().user.linkSent),
    }),
  ]);
  return declareRouter(deps, routes, { tags: ['Console'] });
}
