import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { unprocessable } from '../../../shared/domain/errors';
import { parseLimit } from '../../../shared/http/query-params';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { BEAMS_DEVICE_INTERESTS, BeamsDeviceInterestDocument } from '../../../../projections/beams/beams-devices.projection';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { parsePrefix, prefixRange, SEARCH_PAGE_DEFAULT, SEARCH_PAGE_MAX } from '../prefix-search';

/**
 * `GET beams/interests?prefix=&after=&limit=`: the interests devices hold, in name order, each
 * with how many devices hold it. The registry keeps one row per (device, interest) under an
 * (instance, interest) index: each interest of the page is found by one seek past the one
 * before it, and counted over its own rows, so a page never reads the other interests' rows.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class BeamsInterestsController {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  @Get('beams/interests')
  @Requires(Access.su)
  async list(@Param('instanceId') instanceId: string, @Query() query: Record<string, unknown>) {
    const limit = parseLimit(query.limit, { fallback: SEARCH_PAGE_DEFAULT, max: SEARCH_PAGE_MAX });
    const prefix = parsePrefix(query.prefix);
    const after = query.after;
    if (after !== undefined && typeof after !== 'string') throw unprocessable('invalid_after', 'after must be given once');
    const range = prefix ? prefixRange(prefix) : {};
    const names: string[] = [];
    let at = after || undefined;
    let more = false;
    while (true) {
      const [row] = await this.readModels.find<BeamsDeviceInterestDocument>(BEAMS_DEVICE_INTERESTS, {
        where: { instance_id: instanceId, interest: { ...range, ...(at !== undefined && { gt: at }) } },
        sort: [{ field: 'interest' }],
        limit: 1,
      });
      if (!row) break;
      if (names.length === limit) {
        more = true;
        break;
      }
      names.push(row.interest);
      at = row.interest;
    }
    const counts = await Promise.all(names.map((interest) => this.readModels.count(BEAMS_DEVICE_INTERESTS, { instance_id: instanceId, interest })));
    return {
      interests: names.map((name, i) => ({ name, subscriber_count: counts[i] })),
      ...(more && { next: names[names.length - 1] }),
    };
  }
}
