import { Controller, Delete, Get, Module, Patch, Post, Put } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { interceptWriteRoutes } from './idempotent-write-routes';

@Controller('things')
class ThingsController {
  @Get() list(): void {}
  @Post() create(): void {}
  @Put(':id') replace(): void {}
  @Patch(':id') change(): void {}
  @Delete(':id') remove(): void {}
}

@Controller('nested')
class NestedController {
  @Get(':id') read(): void {}
  @Post() write(): void {}
}

@Module({ controllers: [NestedController] })
class NestedModule {}

@Module({})
class DynamicHost {}

const interceptorsOf = (handler: unknown): unknown[] => Reflect.getMetadata(INTERCEPTORS_METADATA, handler as object) ?? [];

describe('interceptWriteRoutes', () => {
  it('puts the Idempotency-Key interceptor on write routes only, once, in imported and dynamic modules too', () => {
    const modules = [{ module: DynamicHost, controllers: [ThingsController], imports: [NestedModule] }];
    interceptWriteRoutes(modules);
    interceptWriteRoutes(modules);
    const things = ThingsController.prototype;
    for (const write of [things.create, things.replace, things.change, things.remove, NestedController.prototype.write]) {
      expect(interceptorsOf(write)).toEqual([IdempotencyInterceptor]);
    }
    expect(interceptorsOf(things.list)).toEqual([]);
    expect(interceptorsOf(NestedController.prototype.read)).toEqual([]);
  });
});
