import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * Issue 31's gates that ESLint holds (eslint.config.mjs, docs/architecture.md "Layers"): no view imports `db/` or
 * `services/` (the VIEWS zone: every file of src/views/ and every src/console/**\/*.view.tsx), a view may read the
 * API's wire shapes (`src/wire/`, below the routes and the views) and nothing of `routes/`, and no file of src/ holds
 * a non-null `!` (`req.pageEnv!` included).
 * `npm run lint` applies them to the real files; this test shows that they refuse what they must, by linting probe
 * texts under real paths (nothing is written).
 */
const ROOT = path.join(__dirname, '../..');
const RESTRICTED = 'import-x/no-restricted-paths';
const NON_NULL = '@typescript-eslint/no-non-null-assertion';

interface Probe {
  filePath: string;
  text: string;
}

const probes: Record<string, Probe> = {
  pageViewRow: {
    filePath: 'src/views/login.tsx',
    text: "import type { UserRow } from '../db/repositories/users.repo';\nexport type A = UserRow;\n",
  },
  pageViewService: {
    filePath: 'src/views/account.tsx',
    text: "import { getUserDetail } from '../services/users.service';\nexport const a = getUserDetail;\n",
  },
  consoleSharedViewRow: {
    filePath: 'src/views/console/pages.tsx',
    text: "import type { UserRow } from '../../db/repositories/users.repo';\nexport type A = UserRow;\n",
  },
  areaViewService: {
    filePath: 'src/console/webhooks/webhooks.view.tsx',
    text: "import type { ServiceContext } from '../../services/context';\nexport type A = ServiceContext;\n",
  },
  areaViewWireShape: {
    filePath: 'src/console/webhooks/webhooks.view.tsx',
    text: "import type { Webhook } from '../../wire/webhooks/webhooks.schemas';\nexport type A = Webhook;\n",
  },
  sharedViewWireShape: {
    filePath: 'src/views/console/pages.tsx',
    text: "import type { OAuthClient } from '../../wire/admin/admin.schemas';\nexport type A = OAuthClient;\n",
  },
  areaViewRoutes: {
    filePath: 'src/console/webhooks/webhooks.view.tsx',
    text: "import type { RouteDeps } from '../../routes/route';\nexport type A = RouteDeps;\n",
  },
  wireRoutes: {
    filePath: 'src/wire/webhooks/webhooks.schemas.ts',
    text: "import { route } from '../../routes/route';\nexport const a = route;\n",
  },
  wireView: {
    filePath: 'src/wire/admin/admin.schemas.ts',
    text: "import { Field } from '../../views/console/components';\nexport const a = Field;\n",
  },
  pageViewRouter: {
    filePath: 'src/views/login.tsx',
    text: "import { createWebhooksRouter } from '../routes/webhooks/webhooks.router';\nexport const a = createWebhooksRouter;\n",
  },
  httpMiddleware: {
    filePath: 'src/http/dispatch.ts',
    text: "import { createMetrics } from '../middleware/metrics';\nexport const a = createMetrics;\n",
  },
  httpService: {
    filePath: 'src/http/client-cors.ts',
    text: "import type { ServiceContext } from '../services/context';\nexport type A = ServiceContext;\n",
  },
  httpRepository: {
    filePath: 'src/http/client-cors.ts',
    text: "import { findClientById } from '../db/repositories/oauth-clients.repo';\nexport const a = findClientById;\n",
  },
  routesConsole: {
    filePath: 'src/routes/index.ts',
    text: "import { mountConsole } from '../console';\nexport const a = mountConsole;\n",
  },
  routerServiceContext: {
    filePath: 'src/routes/webhooks/webhooks.router.ts',
    text: "import type { RouteDeps } from '../route';\nexport const a = (deps: RouteDeps) => deps.serviceContext.events;\n",
  },
  consoleServiceContext: {
    filePath: 'src/console/webhooks/webhooks.console.ts',
    text: "import type { RouteDeps } from '../../routes/route';\nexport const a = (deps: RouteDeps) => deps.serviceContext.mailer;\n",
  },
  consoleServiceContextDestructured: {
    filePath: 'src/console/webhooks/webhooks.console.ts',
    text: "import type { RouteDeps } from '../../routes/route';\nexport const a = ({ serviceContext }: RouteDeps) => serviceContext.mailer;\n",
  },
  adapterServiceContext: {
    filePath: 'src/routes/route.ts',
    text: "import type { RouteDeps } from './types';\nexport const a = (deps: RouteDeps) => deps.serviceContext;\n",
  },
  ...Object.fromEntries(
    ['src/routes/pages/account-pages.router.ts', 'src/console/action.ts', 'src/http/dispatch.ts', 'src/middleware/global-step.ts'].map(
      (filePath) => [
        `nonNull ${filePath}`,
        { filePath, text: "import type { Request } from 'express';\nexport const env = (req: Request) => req.pageEnv!;\n" },
      ],
    ),
  ),
};

let results: Record<string, string[]>;

beforeAll(() => {
  const entries = Object.entries(probes);
  const out = execFileSync(process.execPath, [path.join(ROOT, 'test/helpers/lint-probes.mjs')], {
    cwd: ROOT,
    input: JSON.stringify(entries.map(([, p]) => ({ ...p, filePath: path.join(ROOT, p.filePath) }))),
    encoding: 'utf8',
  });
  const rules = JSON.parse(out) as string[][];
  results = Object.fromEntries(entries.map(([name], i) => [name, rules[i] ?? []]));
}, 120_000);

test.each(['pageViewRow', 'pageViewService', 'consoleSharedViewRow', 'areaViewService', 'pageViewRouter', 'areaViewRoutes'])(
  'a view that imports a row, a service or anything of routes/ is refused (%s)',
  (name) => {
    expect(results[name]).toContain(RESTRICTED);
  },
);

test('routes/ never imports the console (src/app.ts mounts it: the console builds on the API, not the reverse)', () => {
  expect(results.routesConsole).toContain(RESTRICTED);
});

test.each(['routerServiceContext', 'consoleServiceContext', 'consoleServiceContextDestructured'])(
  "a router or console section never reaches the process's whole context (deps.serviceContext: the route adapter's) (%s)",
  (name) => {
    expect(results[name]).toContain('no-restricted-syntax');
  },
);

test("the route adapter makes each request's context from deps.serviceContext", () => {
  expect(results.adapterServiceContext).not.toContain('no-restricted-syntax');
});

test('http/ (outcomes, the one router) never imports an Express step of middleware/', () => {
  expect(results.httpMiddleware).toContain(RESTRICTED);
});

test.each(['httpService', 'httpRepository'])(
  'http/ imports no service and no repository: the app passes a port in (ClientOrigins) (%s)',
  (name) => {
    expect(results[name]).toContain(RESTRICTED);
  },
);

test.each(['areaViewWireShape', 'sharedViewWireShape'])('a view may import the wire shapes of the API (%s)', (name) => {
  expect(results[name]).not.toContain(RESTRICTED);
});

test.each(['wireRoutes', 'wireView'])("wire/ (the API's shapes) imports no route and no view: both read it (%s)", (name) => {
  expect(results[name]).toContain(RESTRICTED);
});

test.each(Object.keys(probes).filter((name) => name.startsWith('nonNull ')))('`req.pageEnv!` is refused in every layer (%s)', (name) => {
  expect(results[name]).toContain(NON_NULL);
});
