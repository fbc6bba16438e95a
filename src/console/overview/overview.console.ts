import { summaryApi } from '../../routes/admin/admin.router';
import { signInsPerDay } from '../../services/user-admin.service';
import { renderOverview } from '../../views/console/pages';
import { consoleAction, consolePage, consoleRouter, pageEnv } from '../action';

/** The console's overview (CONTRACT §14): the counts of GET /api/admin/summary and the sign-ins of 30 days. */
export const createConsoleOverviewRouter = consoleRouter('overview', (deps) => [
  consoleAction(summaryApi.summary, {
    path: '/',
    summary: 'Console: overview',
    done: async (summary) =>
      consolePage(renderOverview, { summary, days: await signInsPerDay(deps.ctx, 30) }, pageEnv().t.console.overview.title),
  }),
]);
