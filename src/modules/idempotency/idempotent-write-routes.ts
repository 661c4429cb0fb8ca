import { DynamicModule, ForwardReference, RequestMethod, Type } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, MODULE_METADATA } from '@nestjs/common/constants';
import { IdempotencyGuard } from './idempotency.guard';

const WRITE_ROUTE_METHODS: ReadonlySet<RequestMethod> = new Set([RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH, RequestMethod.DELETE]);

type ModuleEntry = Type | DynamicModule | Promise<DynamicModule> | ForwardReference;

/**
 * Puts `IdempotencyGuard` on every write route (POST, PUT, PATCH, DELETE) of the controllers of
 * `modules` and the modules they import, as `@UseGuards` at the route would (a route's guards run
 * after the global access guard). Not global: reads never take a key and pay nothing. Call it
 * before the application is created (Nest reads the metadata when it scans the modules); a write
 * route added later gets it without a decorator to forget.
 */
export function guardWriteRoutes(modules: readonly ModuleEntry[], seen = new Set<unknown>()): void {
  for (const entry of modules) {
    if (entry instanceof Promise || seen.has(entry) || 'forwardRef' in entry) continue;
    seen.add(entry);
    const dynamic = 'module' in entry ? entry : undefined;
    const moduleClass = dynamic ? dynamic.module : (entry as Type);
    const controllers: Type[] = [...(Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, moduleClass) ?? []), ...(dynamic?.controllers ?? [])];
    for (const controller of controllers) guardWritesOf(controller);
    const imports: ModuleEntry[] = [...(Reflect.getMetadata(MODULE_METADATA.IMPORTS, moduleClass) ?? []), ...(dynamic?.imports ?? [])];
    guardWriteRoutes(imports, seen);
  }
}

function guardWritesOf(controller: Type): void {
  const prototype = controller.prototype as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const handler = name === 'constructor' ? undefined : prototype[name];
    if (typeof handler !== 'function' || !WRITE_ROUTE_METHODS.has(Reflect.getMetadata(METHOD_METADATA, handler))) continue;
    const guards: unknown[] = Reflect.getMetadata(GUARDS_METADATA, handler) ?? [];
    if (!guards.includes(IdempotencyGuard)) Reflect.defineMetadata(GUARDS_METADATA, [...guards, IdempotencyGuard], handler);
  }
}
