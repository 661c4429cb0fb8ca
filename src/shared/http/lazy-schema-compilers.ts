/**
 * Fastify's schema compilers (ajv and fast-json-stringify: about 100 modules, some MiB of an idle
 * server's heap), loaded when a route first declares a schema. Parley's routes validate with
 * class-validator and declare none, so a server holds them only if a plugin's route does, and
 * that route then gets Fastify's own compilers, as before. (A compiler factory given this way
 * counts as custom to Fastify, which then leaves a plain-object header schema's names as
 * written instead of lower-casing them: no route declares one.)
 */
import type { FastifyServerOptions } from 'fastify';

type CompilerBuilder = (...args: unknown[]) => unknown;

/** A builder that loads the real one at its first call. */
function loadedAtFirstUse(load: () => CompilerBuilder): CompilerBuilder {
  let builder: CompilerBuilder | undefined;
  return (...args) => (builder ??= load())(...args);
}

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>;
type CompilersFactory = NonNullable<SchemaController['compilersFactory']>;

export const lazySchemaCompilers: Pick<FastifyServerOptions, 'schemaController'> = {
  schemaController: {
    compilersFactory: {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      buildValidator: loadedAtFirstUse(() => (require('@fastify/ajv-compiler') as () => CompilerBuilder)()) as CompilersFactory['buildValidator'],
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      buildSerializer: loadedAtFirstUse(() => (require('@fastify/fast-json-stringify-compiler') as () => CompilerBuilder)()) as CompilersFactory['buildSerializer'],
    },
  },
};
