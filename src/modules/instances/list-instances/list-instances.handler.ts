import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { INSTANCES, InstanceDocument } from '../../../../projections/instances/instances.projection';

export class ListInstancesQuery {}

export interface InstanceSummary {
  readonly id: string;
  readonly cluster: string;
  readonly disabled: boolean;
  readonly token_provider_enabled: boolean;
  readonly created_at: string;
  /** Key ids and states only: secrets never leave the key ring. */
  readonly keys: { key_id: string; disabled: boolean; created_at: string }[];
}

@QueryHandler(ListInstancesQuery)
export class ListInstancesHandler implements IQueryHandler<ListInstancesQuery, InstanceSummary[]> {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  async execute(): Promise<InstanceSummary[]> {
    const docs = await this.readModels.find<InstanceDocument>(INSTANCES, { sort: [{ field: 'id' }] });
    return docs.map((d) => ({
      id: d.id,
      cluster: d.cluster,
      disabled: d.disabled,
      token_provider_enabled: d.token_provider_enabled,
      created_at: d.created_at,
      keys: d.keys.map(({ key_id, disabled, created_at }) => ({ key_id, disabled, created_at })),
    }));
  }
}
