/**
 * Import rules, checked by `npm run lint:deps` (part of `npm test`, so of `.ci/run`).
 *
 * - Pure code stays pure: projections/ and every domain/ folder import no framework or driver.
 * - Adapters implement ports; they never reach into the modules or the app that use them.
 * - A module uses another only through its public surface: its domain/ and presentation/
 *   folders and its top-level files (module, read models, access rules, route constants),
 *   plus the instances module's authentication/ (the token guard every context uses). Its
 *   use-case folders (src/modules/<context>/<use-case>/) are its own business.
 * - src/shared/application/ (write-path/, projection-runtime/, operations/) works through the
 *   ports alone: no module, adapter, app or driver; the app wires the adapters in. The write
 *   path stands alone; the projection runtime may use it (read-your-writes) and operations.
 *   Their specs may use real adapters (real parts, not mocks): the rules on modules, adapters,
 *   drivers and Nest skip spec files.
 */

/** Frameworks and drivers, as resolved under node_modules. */
const FRAMEWORKS_AND_DRIVERS = 'node_modules/(@nestjs/|fastify/|@fastify/|better-sqlite3/|mongodb/|@eventstore/|ws/|pino/)';
/** Storage drivers, transports and the logger: what only adapters and the app may import. */
const DRIVERS = 'node_modules/(fastify/|@fastify/|better-sqlite3/|mongodb/|@eventstore/|ws/|pino/)';
/** The application layer's own code, without its specs. */
const APPLICATION = { path: '^src/shared/application/', pathNot: '[.]spec[.]ts$' };

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
      name: 'pure-code-imports-no-application',
      comment: 'projections/ and domain/ folders are what the application layer runs; they never call back into it.',
      severity: 'error',
      from: { path: '^(projections/|src/modules/[^/]+/domain/|src/shared/domain/)' },
      to: { path: '^src/shared/application/' },
    },
    {
      name: 'application-imports-no-module-adapter-or-app',
      comment:
        'src/shared/application/ (write path, projection runtime, operations) works through the ports in src/shared/ports: it imports no module, adapter, infrastructure, app, HTTP, CLI or config code.',
      severity: 'error',
      from: APPLICATION,
      to: { path: '^src/(modules|adapters|infrastructure|app|cli|config|shared/http)/' },
    },
    {
      name: 'application-imports-no-driver',
      comment: 'src/shared/application/ reaches storage and clients only through the ports: no SQLite, MongoDB, EventStoreDB, Fastify, ws or pino.',
      severity: 'error',
      from: APPLICATION,
      to: { path: DRIVERS },
    },
    {
      name: 'projection-runtime-and-operations-import-no-nest',
      comment: 'The projection runtime and operations are plain classes the app wires in; only the write path is a Nest provider (@nestjs/common for injection).',
      severity: 'error',
      from: { path: '^src/shared/application/(projection-runtime|operations)/', pathNot: '[.]spec[.]ts$' },
      to: { path: 'node_modules/@nestjs/' },
    },
    {
      name: 'write-path-stands-alone',
      comment:
        'A command decides and appends without the projection runtime or operations; the runtime answers read-your-writes through the port the write path declares (write-path/read-your-writes.ts).',
      severity: 'error',
      from: { path: '^src/shared/application/write-path/' },
      to: { path: '^src/shared/application/(projection-runtime|operations)/' },
    },
    {
      name: 'operations-stand-below-the-runtime-and-write-path',
      comment: 'Operations (storage health, sweeps, leases, backoff, instance transfer) are used by the projection runtime; they import neither it nor the write path.',
      severity: 'error',
      from: { path: '^src/shared/application/operations/' },
      to: { path: '^src/shared/application/(projection-runtime|write-path)/' },
    },
    {
      name: 'adapters-import-no-application',
      comment: 'Adapters implement the ports; the application layer uses them, never the reverse.',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: '^src/shared/application/' },
    },
    {
      name: 'client-libraries-stand-alone',
      comment: 'src/client (parley/feeds, parley/chat-server) runs in apps: it imports only its own files, Node and jsonwebtoken, nothing of the server.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { pathNot: ['^src/client/', '^node_modules/(jsonwebtoken|@types/jsonwebtoken)/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'swagger-loads-when-the-document-is-built',
      comment:
        "@nestjs/swagger loads at the first GET /openapi.json (src/modules/api-docs/swagger-library.ts): routes decorate through its ApiDoc, other files import the library's types only.",
      severity: 'error',
      from: { path: '^(src|projections)/', pathNot: '^src/modules/api-docs/swagger-library[.]ts$' },
      to: { path: 'node_modules/@nestjs/swagger/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'class-validator-by-its-parts',
      comment:
        "class-validator's index loads every validator it has (libphonenumber-js, all of validator.js): its decorators and functions come from src/shared/http/class-validator-parts.ts, the package gives types only.",
      severity: 'error',
      from: { path: '^(src|projections)/', pathNot: '^src/shared/http/class-validator-parts[.]ts$' },
      to: { path: 'node_modules/class-validator/', dependencyTypesNot: ['type-only'] },
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
