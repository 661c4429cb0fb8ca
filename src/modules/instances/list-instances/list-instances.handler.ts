import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { INSTANCES, InstanceDocument } from '../../../../projections/instances/instances.projection';

/** A page of instances by id: those after `after`, at most `limit`. */
export interface InstancesPage {
  readonly after?: string;
  readonly limit: number;
}

/** Without a page: every instance (the admin CLI's listing). */
export class ListInstancesQuery {
  constructor(readonly page?: InstancesPage) {}
}

export interface InstanceSummary {
  readonly id: string;
  readonly cluster: string;
  readonly disabled: boolean;
  readonly token_provider_enabled: boolean;
  readonly created_at: string;
  /** Key ids and states only: secrets never leave the key ring. */
  readonly keys: { key_id: string; disabled: boolean; created_at: string }[];
}

export const summarizeInstance = (d: InstanceDocument): InstanceSummary => ({
  id: d.id,
  cluster: d.cluster,
  disabled: d.disabled,
  token_provider_enabled: d.token_provider_enabled,
  created_at: d.created_at,
  keys: d.keys.map(({ key_id, disabled, created_at }) => ({ key_id, disabled, created_at })),
});

/** Instances in id order, from the instances read model (a page reads the `id` index, never the whole collection). */
@QueryHandler(ListInstancesQuery)
export class ListInstancesHandler implements IQueryHandler<ListInstancesQuery, InstanceSummary[]> {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  async execute({ page }: ListInstancesQuery): Promise<InstanceSummary[]> {
    const docs = await this.readModels.find<InstanceDocument>(INSTANCES, {
      ...(page?.after !== undefined && { where: { id: { gt: page.after } } }),
      sort: [{ field: 'id' }],
      ...(page && { limit: page.limit }),
    });
    return docs.map(summarizeInstance);
  }
}
