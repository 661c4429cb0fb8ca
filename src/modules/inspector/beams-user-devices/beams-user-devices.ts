import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { unprocessable } from '../../../shared/domain/errors';
import { parseLimit } from '../../../shared/http/query-params';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { BEAMS_DEVICES, BeamsDeviceDocument } from '../../../../projections/beams/beams-devices.projection';
import { beamsDeviceStream } from '../../beams/domain/beams-device.decider';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { SEARCH_PAGE_DEFAULT, SEARCH_PAGE_MAX } from '../prefix-search';

/**
 * `GET beams/users/:userId/devices?after=&limit=`: the devices a Beams user has (id, platform,
 * and when it registered, from its stream's first event), by device id, a page at a time
 * through the registry's (instance, user, device) index. Never the push address.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class BeamsUserDevicesController {
  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    private readonly pipeline: CommandPipeline,
  ) {}

  @Get('beams/users/:userId/devices')
  @Requires(Access.su)
  async list(@Param('instanceId') instanceId: string, @Param('userId') userId: string, @Query() query: Record<string, unknown>) {
    const limit = parseLimit(query.limit, { fallback: SEARCH_PAGE_DEFAULT, max: SEARCH_PAGE_MAX });
    const after = query.after;
    if (after !== undefined && typeof after !== 'string') throw unprocessable('invalid_after', 'after must be given once');
    const docs = await this.readModels.find<BeamsDeviceDocument>(BEAMS_DEVICES, {
      where: { instance_id: instanceId, user_id: userId, ...(after && { device_id: { gt: after } }) },
      sort: [{ field: 'device_id' }],
      limit: limit + 1,
    });
    const page = docs.slice(0, limit);
    const devices = await Promise.all(
      page.map(async (device) => {
        const [registered] = await this.pipeline.readStream(beamsDeviceStream(instanceId, device.device_id), { fromRevision: 0, maxCount: 1 });
        return { id: device.device_id, platform: device.platform, created: registered?.recordedAt ?? null };
      }),
    );
    return { devices, ...(docs.length > limit && { next: page[page.length - 1].device_id }) };
  }
}
