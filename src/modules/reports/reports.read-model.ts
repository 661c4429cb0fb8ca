import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../projections/projection';
import { ReportDocument, reportDocumentId, REPORTS, reportsProjection } from '../../../projections/reports/reports.projection';

/** A report change answers once the review queue shows it. */
export const REPORT_READS: readonly string[] = [checkpointName(reportsProjection)];

export type ReportStatusFilter = 'open' | 'resolved' | 'all';

@Injectable()
export class ReportsReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  get(instanceId: string, reportId: string): Promise<ReportDocument | null> {
    return this.readModels.get<ReportDocument>(REPORTS, reportDocumentId(instanceId, reportId));
  }

  /** The queue oldest first (what waits longest is seen first), after the cursor `after` (a `queue_key`), through the (instance, status, queue_key) index. */
  page(instanceId: string, status: ReportStatusFilter, after: string | undefined, limit: number): Promise<ReportDocument[]> {
    return this.readModels.find<ReportDocument>(REPORTS, {
      where: { instance_id: instanceId, ...(status !== 'all' && { status }), ...(after !== undefined && { queue_key: { gt: after } }) },
      sort: [{ field: 'queue_key' }],
      limit,
    });
  }
}
