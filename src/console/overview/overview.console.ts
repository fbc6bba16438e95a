import { summaryApi } from '../../routes/admin/admin.router';
import { renderOverview } from '../../views/console/pages';
import { consoleAction, consolePage, consoleRouter, pageEnv } from '../action';

/** The console's overview (CONTRACT §14): the counts of GET /api/admin/summary and 30 days of GET /api/admin/summary/sign-ins. */
export const createConsoleOverviewRouter = consoleRouter('overview', () => [
  consoleAction(summaryApi.summary, {
    path: '/',
    summary: 'Console: overview',
    done: async (summary, { call }) => {
      const title = pageEnv().t.console.overview.title;
      return consolePage(renderOverview, { summary, days: (await call(summaryApi.signIns, { query: { days: 30 } })).days }, title);
    },
  }),
]);
