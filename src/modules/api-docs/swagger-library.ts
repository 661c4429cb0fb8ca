import type * as Swagger from '@nestjs/swagger';

/*
 * @nestjs/swagger (with lodash and js-yaml, about 2.5 MB of heap and a hundred modules) is loaded
 * when the OpenAPI document is first built, at the first GET /openapi.json: a server that is never
 * asked for it does without. Its decorators on routes are recorded at load and applied then.
 */

export type SwaggerLibrary = typeof Swagger;

let loaded: SwaggerLibrary | undefined;

/** @nestjs/swagger, loaded at the first call. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const swaggerLibrary = (): SwaggerLibrary => (loaded ??= require('@nestjs/swagger') as SwaggerLibrary);

/** Decorations waiting for the library, in the order TypeScript applied them (bottom-up on a method). */
const deferred: (() => void)[] = [];

/**
 * A route's @nestjs/swagger decorator, e.g. `@ApiDoc((swagger) => swagger.ApiOkResponse({…}))`:
 * applied to the method as swagger's own would be, only when the document is first built
 * (applyDeferredApiDocs), so loading the controller does not load the library.
 */
export function ApiDoc(decorator: (swagger: SwaggerLibrary) => MethodDecorator): MethodDecorator {
  return (target, key, descriptor) => {
    deferred.push(() => decorator(swaggerLibrary())(target, key, descriptor));
  };
}

/** Applies the decorations recorded so far (each once per process): before the controllers are scanned. */
export function applyDeferredApiDocs(): void {
  for (const apply of deferred.splice(0)) apply();
}
