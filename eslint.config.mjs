// ESLint (flat config) with typescript-eslint: `npm run lint`, run by .ci/run before the tests. Formatting is Prettier's
// (.prettierrc.json, `npm run format`); this config checks code, plus the one layout rule the house keeps: at most 140
// characters a line (docs/development.md).
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

/**
 * The layers of src/ (docs/architecture.md, "Layers"): an arrow may only run down. Each zone names a folder and what
 * it must not import; `except` lists what it may import from a forbidden folder.
 */
const up = (target, from, message, except) => ({ target, from, message, ...(except ? { except } : {}) });
// Every view: the end-user pages' and the console's shared views (src/views/**) and each console area's *.view.tsx.
const VIEWS = ['./src/views', './src/console/**/*.view.tsx'];
// The console's files: every area imports no service or row (docs/architecture.md).
const CONSOLE_BUILT_FROM_API = ['./src/console/**/*'];
const TOP = ['./src/app.ts', './src/server.ts', './src/create-context.ts', './src/cli'];
/**
 * The layers above lib/, i18n/ and errors/ (the ground, which imports none of them), lowest first: a layer never imports
 * one above it. config/ sits above declarations/ because it reads the settings declarations. The views and the Express
 * steps have rules of their own as well (below).
 */
const STACK = [
  './src/declarations',
  './src/config',
  './src/db',
  './src/services',
  './src/wire',
  './src/views',
  './src/http',
  './src/middleware',
  './src/routes',
  './src/console',
  ...TOP,
];
const above = (layer) => STACK.slice(STACK.indexOf(layer) + 1);
const LAYERS = [
  // lib: the ground. Node and packages only.
  ...STACK.map((from) => up('./src/lib', from, 'lib/ is the ground floor: it imports nothing of the app.')),
  // i18n and errors: beside lib.
  ...STACK.flatMap((from) => [
    up('./src/i18n', from, 'i18n/ holds the catalogues: it imports only lib/.'),
    up('./src/errors', from, 'errors/ is shared by every layer: it imports only lib/.'),
  ]),
  // declarations: pure shared declarations (settings, client presets and policy, user status, list counts) that
  // services, routes and views all read; no I/O, so they import only lib/, i18n/ and errors/.
  ...above('./src/declarations').map((from) =>
    up('./src/declarations', from, 'declarations/ are pure and shared: they import only lib/, i18n/ and errors/.'),
  ),
  // db: repositories and the pool know no service, route or view.
  ...above('./src/db').map((from) => up('./src/db', from, 'db/ is below the services: a repository returns rows, it does not call up.')),
  // services: the domain. Mail is drawn through the port in the context (services/mail.ts), never by importing a view.
  ...above('./src/services').map((from) =>
    up(
      './src/services',
      from,
      'services/ know no HTTP and no view: render mail through ctx.mailHtml, take plain input, return plain output.',
    ),
  ),
  // wire: the API's request and response shapes (zod), read by the routes and the views alike; below both.
  ...above('./src/wire').map((from) =>
    up('./src/wire', from, "wire/ holds the API's shapes, below the routes and the views that read them: it imports neither."),
  ),
  // views: render what they are given (the API's wire shapes, src/wire/, or their own prop types).
  up(VIEWS, './src/db', 'A view receives wire shapes or its own prop types, never a database row.'),
  up(
    VIEWS,
    './src/services',
    'A view receives wire shapes or its own prop types, never a service type (shared declarations: declarations/).',
  ),
  up(VIEWS, './src/routes', "A view reads the API's wire shapes from wire/, never routes/ (which is above every view)."),
  ...['./src/middleware', './src/http', './src/console', ...TOP].map((from) =>
    up('./src/views', from, 'A view knows no Express and no console wiring.'),
  ),
  ...['./src/middleware', './src/http', ...TOP].map((from) => up('./src/console/**/*.view.tsx', from, 'A view knows no Express.')),
  // console: a client of the API (issue 31). Pages and actions are built from the REST declarations (src/console/action.ts)
  // and read services and rows only through them, every area alike.
  ...['./src/services', './src/db'].map((from) =>
    up(
      CONSOLE_BUILT_FROM_API,
      from,
      'The console is built from the API: call the endpoint (consoleAction, call, asking) or its port in routes/, not a service or a repository.',
    ),
  ),
  // routes: the API and the pages; the console is mounted beside them by the app (src/console/index.ts), never by routes/.
  ...['./src/console', ...TOP].map((from) =>
    up('./src/routes', from, 'routes/ knows no console: the console builds on the API, and src/app.ts mounts it (src/console/index.ts).'),
  ),
  // http: the outcome kit and the one router, below the Express steps that use them (middleware/ writes outcomes).
  ...['./src/middleware', './src/routes', './src/console', ...TOP].map((from) =>
    up('./src/http', from, 'http/ (outcomes, the router) is below the Express steps and the routes: it imports none of them.'),
  ),
  // ...and it knows no domain: what a step needs of it is a port that the app fills (ClientOrigins in http/client-cors.ts).
  ...['./src/services', './src/db'].map((from) =>
    up('./src/http', from, 'http/ knows no service or repository: declare what the step needs as a port and let src/app.ts pass it in.'),
  ),
  // middleware: the Express steps; the error page is injected by the app.
  ...['./src/views', './src/routes', './src/console', ...TOP].map((from) =>
    up('./src/middleware', from, 'middleware/ is below routes and beside views: a page it needs is injected (createErrorHandler).'),
  ),
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'coverage/', '.test-pg/', 'test-output/', 'examples/**/node_modules/', '.exp-*/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        __filename: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        clearImmediate: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        fetch: 'readonly',
        performance: 'readonly',
        structuredClone: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        window: 'readonly',
        document: 'readonly',
        navigator: 'readonly',
        Response: 'readonly',
        Request: 'readonly',
        Headers: 'readonly',
        crypto: 'readonly',
        atob: 'readonly',
        btoa: 'readonly',
        queueMicrotask: 'readonly',
        exports: 'writable',
      },
    },
    plugins: { '@stylistic': stylistic },
    rules: {
      // Strings and template literals are not broken (HTML, SQL and messages would change; Prettier leaves them too).
      '@stylistic/max-len': [
        'error',
        { code: 140, tabWidth: 2, ignoreUrls: true, ignoreRegExpLiterals: true, ignoreStrings: true, ignoreTemplateLiterals: true },
      ],
      // Refusing control characters is what several validators do on purpose.
      'no-control-regex': 'off',
      // `_name` marks what is deliberately unused (destructuring that drops a field, a handler's unused request).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // Lazy loading (`require` inside a function) keeps start-up lean (docs/performance.md); it is deliberate here.
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // The layer rules and no import circle (docs/architecture.md, "Layers").
    files: ['src/**/*.{ts,tsx}'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.json', '.node'] })],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/extensions': ['.ts', '.tsx', '.js'],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: LAYERS }],
    },
  },
  {
    // Routers and console sections build with `app` / `deps.ctx` (an AppContext) and serve with their input's `ctx`;
    // the process's whole context, `deps.serviceContext`, is the route adapter's alone (docs/architecture.md).
    files: ['src/routes/**/*.{ts,tsx}', 'src/console/**/*.{ts,tsx}'],
    ignores: ['src/routes/route.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[property.name='serviceContext']",
          message: "deps.serviceContext is the route adapter's: build with `app` (deps.ctx), serve with the handler input's `ctx`",
        },
        {
          selector: "ObjectPattern > Property[key.name='serviceContext']",
          message: "deps.serviceContext is the route adapter's: build with `app` (deps.ctx), serve with the handler input's `ctx`",
        },
      ],
    },
  },
  {
    // No non-null `!` anywhere in src/ (issue 31): where a value may be missing, the type says so and the code narrows
    // it (a check, a helper that throws a clear error); `npx tsx scripts/type-escapes.ts --list` counts what is left.
    files: ['src/**/*.{ts,tsx}'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'error' },
  },
);
