import { summaryApi } from '../../routes/admin/admin.router';
import { declareRouter } from '../../routes/route';
import type { RouteDeps } from '../../routes/types';
import { signInsPerDay } from '../../services/user-admin.service';
import { renderOverview } from '../../views/console/pages';
import { pageEnv } from '../../views/env';
import { consoleAction, consolePage, consoleSection } from '../action';

/** The console's overview (CONTRACT §14): the counts of GET /api/admin/summary and the sign-ins of 30 days. */
export function createConsoleOverviewRouter(deps: RouteDeps) {
  const routes = consoleSection('overview', deps.ctx, [
    consoleAction(summaryApi.summary, {
      path: '/',
      summary: 'Console: overview',
      done: async (summary) =>
        consolePage(renderOverview, { summary, days: await signInsPerDay(deps.ctx, 30) }, pageEnv().t.console.overview.title),
    }),
  ]);
  return declareRouter(deps, routes, { tags: ['Console'] });
}
