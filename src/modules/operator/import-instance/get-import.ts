import { Controller, Get, Param } from '@nestjs/common';
import { ApiDoc } from '../../api-docs/swagger-library';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { PARLEY_OPERATOR_ROUTE } from '../operator-route';
import { ImportJobs, ImportView } from './import-jobs';

const count = { type: 'integer', minimum: 0 };

/** The import job's state, as `POST …/import` started it (`GET …/imports/:importId`). */
export const IMPORT_VIEW_SCHEMA = {
  type: 'object',
  required: ['id', 'instance_id', 'status', 'received_bytes', 'started_at', 'events_appended', 'events_present', 'blobs_copied', 'blobs_present'],
  properties: {
    id: { type: 'string' },
    instance_id: { type: 'string' },
    status: { type: 'string', enum: ['receiving', 'checking', 'importing', 'done', 'failed'] },
    received_bytes: count,
    started_at: { type: 'string', format: 'date-time' },
    finished_at: { type: 'string', format: 'date-time' },
    events_total: count,
    blobs_total: count,
    events_appended: count,
    events_present: count,
    blobs_copied: count,
    blobs_present: count,
    error: { type: 'object', properties: { error: { type: 'string' }, error_description: { type: 'string' } } },
  },
};

@Controller(PARLEY_OPERATOR_ROUTE)
export class GetImportController {
  constructor(private readonly jobs: ImportJobs) {}

  @Get('instances/:instanceId/imports/:importId')
  @Requires(Access.operator)
  @ApiDoc((swagger) => swagger.ApiOkResponse({ description: "An import's progress and outcome (kept by the server process that took the archive)", schema: IMPORT_VIEW_SCHEMA }))
  get(@Param('instanceId') instanceId: string, @Param('importId') importId: string): ImportView {
    return this.jobs.get(instanceId, importId);
  }
}
