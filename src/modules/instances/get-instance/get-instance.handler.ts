import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { INSTANCES, InstanceDocument, instanceDocumentId } from '../../../../projections/instances/instances.projection';
import { instanceNotFound } from '../domain/instance.decider';
import { InstanceSummary, summarizeInstance } from '../list-instances/list-instances.handler';

export class GetInstanceQuery {
  constructor(readonly instanceId: string) {}
}

/** One instance, disabled ones included (404 when it was never created). */
@QueryHandler(GetInstanceQuery)
export class GetInstanceHandler implements IQueryHandler<GetInstanceQuery, InstanceSummary> {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  async execute({ instanceId }: GetInstanceQuery): Promise<InstanceSummary> {
    const doc = await this.readModels.get<InstanceDocument>(INSTANCES, instanceDocumentId(instanceId));
    if (!doc) throw instanceNotFound(instanceId);
    return summarizeInstance(doc);
  }
}
