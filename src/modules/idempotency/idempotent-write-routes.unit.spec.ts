import { Controller, Delete, Get, Module, Patch, Post, Put } from '@nestjs/common';
import { GUARDS_METADATA } from '@nestjs/common/constants';
import { IdempotencyGuard } from './idempotency.guard';
import { guardWriteRoutes } from './idempotent-write-routes';

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

const guardsOf = (handler: unknown): unknown[] => Reflect.getMetadata(GUARDS_METADATA, handler as object) ?? [];

describe('guardWriteRoutes', () => {
  it('puts the Idempotency-Key guard on write routes only, once, in imported and dynamic modules too', () => {
    const modules = [{ module: DynamicHost, controllers: [ThingsController], imports: [NestedModule] }];
    guardWriteRoutes(modules);
    guardWriteRoutes(modules);
    const things = ThingsController.prototype;
    for (const write of [things.create, things.replace, things.change, things.remove, NestedController.prototype.write]) {
      expect(guardsOf(write)).toEqual([IdempotencyGuard]);
    }
    expect(guardsOf(things.list)).toEqual([]);
    expect(guardsOf(NestedController.prototype.read)).toEqual([]);
  });
});
