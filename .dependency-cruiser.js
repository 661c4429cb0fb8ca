/**
 * Import rules, checked by `npm run lint:deps` (part of `npm test`, so of `.ci/run`).
 *
 * - Pure code stays pure: projections/ and every domain/ folder import no framework or driver.
 * - Adapters implement ports; they never reach into the modules or the app that use them.
 * - A module uses another only through its public surface: its domain/ and presentation/
 *   folders and its top-level files (module, read models, access rules, route constants),
 *   plus the instances module's authentication/ (the token guard every context uses). Its
 *   use-case folders (src/modules/<context>/<use-case>/) are its own business.
 */

/** Frameworks and drivers, as resolved under node_modules. */
const FRAMEWORKS_AND_DRIVERS = 'node_modules/(@nestjs/|fastify/|@fastify/|better-sqlite3/|mongodb/|@eventstore/|ws/|pino/)';

module.exports = {
  forbidden: [
    {
      name: 'pure-code-imports-no-framework-or-driver',
      comment: 'projections/ and domain/ folders are pure: no Nest, Fastify, SQLite, MongoDB, EventStoreDB, ws or pino.',
      severity: 'error',
      from: { path: '^(projections/|src/modules/[^/]+/domain/|src/shared/domain/)' },
      to: { path: FRAMEWORKS_AND_DRIVERS },
    },
    {
      name: 'pure-code-imports-no-adapter-or-app',
      comment: 'projections/ and domain/ folders reach no adapter, infrastructure, app or HTTP code (which would bring the frameworks in).',
      severity: 'error',
      from: { path: '^(projections/|src/modules/[^/]+/domain/|src/shared/domain/)' },
      to: { path: '^src/(adapters|infrastructure|app|shared/http)/' },
    },
    {
      name: 'adapters-import-no-module',
      comment: 'Adapters implement the ports in src/shared; they never import the modules or the app.',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: '^src/(modules|app)/' },
    },
    {
      name: 'modules-meet-through-their-public-surface',
      comment:
        "Another module is imported through its domain/, presentation/ or top-level files (or instances' authentication/), never through its use-case folders (src/modules/<context>/<use-case>/).",
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/[^/]+/[^/]+/',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/(domain|presentation)/', '^src/modules/instances/authentication/'],
      },
    },
    {
      name: 'client-libraries-stand-alone',
      comment: 'src/client (parley/feeds, parley/chat-server) runs in apps: it imports only its own files, Node and jsonwebtoken, nothing of the server.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { pathNot: ['^src/client/', '^node_modules/(jsonwebtoken|@types/jsonwebtoken)/'], dependencyTypesNot: ['core'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['cjs', 'es6'],
    skipAnalysisNotInRules: true,
    cache: false,
  },
};
