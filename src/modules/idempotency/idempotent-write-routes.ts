import { DynamicModule, ForwardReference, RequestMethod, Type } from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA, MODULE_METADATA } from '@nestjs/common/constants';
import { IdempotencyInterceptor } from './idempotency.interceptor';

const WRITE_ROUTE_METHODS: ReadonlySet<RequestMethod> = new Set([RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH, RequestMethod.DELETE]);

type ModuleEntry = Type | DynamicModule | Promise<DynamicModule> | ForwardReference;

/**
 * Puts the `Idempotency-Key` interceptor on every write route (POST, PUT, PATCH, DELETE) of the
 * controllers of `modules` and the modules they import, as `@UseInterceptors` at the route would.
 * Not a global interceptor: with any interceptor on a route, Nest runs each request through an
 * rxjs pipeline and `AsyncResource.bind`, which cost reads (that never take a key) about a
 * third of their throughput. Call it before the application is created (Nest reads the metadata
 * when it scans the modules); a write route added later gets it without a decorator to forget.
 */
export function interceptWriteRoutes(modules: readonly ModuleEntry[], seen = new Set<unknown>()): void {
  for (const entry of modules) {
    if (entry instanceof Promise || seen.has(entry) || 'forwardRef' in entry) continue;
    seen.add(entry);
    const dynamic = 'module' in entry ? entry : undefined;
    const moduleClass = dynamic ? dynamic.module : (entry as Type);
    const controllers: Type[] = [...(Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, moduleClass) ?? []), ...(dynamic?.controllers ?? [])];
    for (const controller of controllers) interceptWritesOf(controller);
    const imports: ModuleEntry[] = [...(Reflect.getMetadata(MODULE_METADATA.IMPORTS, moduleClass) ?? []), ...(dynamic?.imports ?? [])];
    interceptWriteRoutes(imports, seen);
  }
}

function interceptWritesOf(controller: Type): void {
  const prototype = controller.prototype as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const handler = name === 'constructor' ? undefined : prototype[name];
    if (typeof handler !== 'function' || !WRITE_ROUTE_METHODS.has(Reflect.getMetadata(METHOD_METADATA, handler))) continue;
    const interceptors: unknown[] = Reflect.getMetadata(INTERCEPTORS_METADATA, handler) ?? [];
    if (!interceptors.includes(IdempotencyInterceptor)) Reflect.defineMetadata(INTERCEPTORS_METADATA, [...interceptors, IdempotencyInterceptor], handler);
  }
}
