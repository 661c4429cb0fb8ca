import { Controller, Get, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiDoc } from '../../api-docs/swagger-library';
import { unprocessable } from '../../../shared/domain/errors';
import { INSTANCE_ID_PATTERN } from '../../../shared/domain/streams';
import { parseLimit } from '../../../shared/http/query-params';
import { InstanceSummary, ListInstancesQuery } from '../../instances/instance-administration';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { INSTANCE_SCHEMA, InstanceView, presentInstance } from '../instance-view';
import { PARLEY_OPERATOR_ROUTE } from '../operator-route';

export const INSTANCES_PAGE_DEFAULT = 50;
export const INSTANCES_PAGE_MAX = 100;

/** `GET /instances?after=&limit=`: instances in id order, a page at a time; `next` is the `after` of the next page. */
@Controller(PARLEY_OPERATOR_ROUTE)
export class ListInstancesController {
  constructor(private readonly queries: QueryBus) {}

  @Get('instances')
  @Requires(Access.operator)
  @ApiDoc((swagger) => swagger.ApiQuery({ name: 'after', required: false, schema: { type: 'string' }, description: 'Instances after this id (the `next` of the previous page)' }))
  @ApiDoc((swagger) => swagger.ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: INSTANCES_PAGE_MAX, default: INSTANCES_PAGE_DEFAULT } }))
  @ApiDoc((swagger) => swagger.ApiOkResponse({
    description: 'A page of instances',
    schema: { type: 'object', required: ['instances'], properties: { instances: { type: 'array', items: INSTANCE_SCHEMA }, next: { type: 'string' } } },
  }))
  async list(@Query() query: Record<string, unknown>): Promise<{ instances: InstanceView[]; next?: string }> {
    const limit = parseLimit(query.limit, { fallback: INSTANCES_PAGE_DEFAULT, max: INSTANCES_PAGE_MAX });
    const after = query.after;
    if (after !== undefined && (typeof after !== 'string' || !INSTANCE_ID_PATTERN.test(after))) {
      throw unprocessable('invalid_after', 'after must be an instance id, as given in a previous page\'s "next"');
    }
    // One more than the page: whether there is a next page, without counting.
    const found = await this.queries.execute<ListInstancesQuery, InstanceSummary[]>(new ListInstancesQuery({ after, limit: limit + 1 }));
    const instances = found.slice(0, limit).map(presentInstance);
    return { instances, ...(found.length > limit && { next: instances[instances.length - 1]!.id }) };
  }
}
