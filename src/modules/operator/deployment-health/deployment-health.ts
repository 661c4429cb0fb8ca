import { Controller, Get, Inject } from '@nestjs/common';
import { ApiDoc } from '../../api-docs/swagger-library';
import { WEBHOOKS, WebhookDocument } from '../../../../projections/webhooks/webhooks.projection';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { HEALTH_SOURCES, HealthSources } from '../../health/health-sources';
import { HealthReport, ProjectionHealth, Readiness } from '../../health/readiness';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { PARLEY_OPERATOR_ROUTE } from '../operator-route';

/** The most failing webhooks one answer lists (across instances; `webhooks_failing_more` says when there are more). */
export const FAILING_WEBHOOKS_SHOWN = 100;

export interface FailingWebhook {
  readonly instance_id: string;
  readonly webhook_id: string;
  readonly url: string;
  /** When its deliveries stopped: every attempt of one event failed. */
  readonly failing_since: string;
  readonly event_type?: string;
  readonly response_code?: number | null;
  readonly error?: string;
}

export type ProjectionHealthView = { readonly name: string; readonly lag: number; readonly lag_unit: 'events' | 'log_bytes' } & ProjectionHealth;

/** What /health knows, in detail, for operators: always 200, the `status` says whether this process is ready. */
export interface DeploymentHealth extends Omit<HealthReport, 'projections'> {
  readonly log_position: string | null;
  readonly projections: readonly ProjectionHealthView[];
  readonly webhooks_failing: readonly FailingWebhook[];
  readonly webhooks_failing_more: boolean;
}

/**
 * `GET /health`: readiness as /health computes it (projections with state, lag and errors, the
 * live log, storage), the head of the log, and the webhooks whose deliveries stopped on
 * failures (deactivated until someone reactivates them), across instances.
 */
@Controller(PARLEY_OPERATOR_ROUTE)
export class DeploymentHealthController {
  constructor(
    private readonly readiness: Readiness,
    @Inject(HEALTH_SOURCES) private readonly sources: HealthSources,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
  ) {}

  @Get('health')
  @Requires(Access.operator)
  @ApiDoc((swagger) => swagger.ApiOkResponse({
    description: "This process's readiness in detail, and the webhooks whose deliveries stopped",
    schema: {
      type: 'object',
      required: ['status', 'log_position', 'projections', 'live_log', 'storage', 'webhooks_failing'],
      properties: {
        status: { type: 'string', enum: ['ok', 'unavailable', 'starting', 'stopping'] },
        problems: { type: 'array', items: { type: 'string' } },
        warnings: { type: 'array', items: { type: 'string' } },
        log_position: { type: 'string', nullable: true, description: 'The head of the event log' },
        projections: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'state', 'lag', 'lag_unit', 'lag_seconds'],
            properties: {
              name: { type: 'string' },
              state: { type: 'string' },
              role: { type: 'string', enum: ['building', 'retired'] },
              position: { type: 'string', nullable: true },
              lag: { type: 'integer' },
              lag_unit: { type: 'string', enum: ['events', 'log_bytes'] },
              lag_seconds: { type: 'number' },
              error: { type: 'string' },
            },
          },
        },
        live_log: { type: 'object', properties: { state: { type: 'string', enum: ['following', 'dropped'] }, error: { type: 'string' } } },
        storage: { type: 'object', properties: { state: { type: 'string', enum: ['ok', 'failing'] }, error: { type: 'string' }, space_left_bytes: { type: 'integer' } } },
        webhooks_failing: {
          type: 'array',
          items: {
            type: 'object',
            required: ['instance_id', 'webhook_id', 'url', 'failing_since'],
            properties: {
              instance_id: { type: 'string' },
              webhook_id: { type: 'string' },
              url: { type: 'string' },
              failing_since: { type: 'string', format: 'date-time' },
              event_type: { type: 'string' },
              response_code: { type: 'integer', nullable: true },
              error: { type: 'string' },
            },
          },
        },
        webhooks_failing_more: { type: 'boolean', description: `There may be more failing webhooks than the ${FAILING_WEBHOOKS_SHOWN} listed` },
      },
    },
  }))
  async health(): Promise<DeploymentHealth> {
    const [report, head, failing] = await Promise.all([this.readiness.report(), this.sources.headPosition(), this.failingWebhooks()]);
    const projections = Object.entries(report.projections).map(([name, health]): ProjectionHealthView => ({
      name,
      lag: health.lag_log_bytes ?? health.lag_events ?? 0,
      lag_unit: health.lag_log_bytes === undefined ? 'events' : 'log_bytes',
      ...health,
    }));
    return { ...report, log_position: head, projections, ...failing };
  }

  private async failingWebhooks(): Promise<Pick<DeploymentHealth, 'webhooks_failing' | 'webhooks_failing_more'>> {
    // Inactive webhooks, by the `active` index; those a PUT switched off are not failing.
    const inactive = await this.readModels.find<WebhookDocument>(WEBHOOKS, { where: { active: false }, limit: FAILING_WEBHOOKS_SHOWN * 2 });
    const failing = inactive
      .filter((doc) => doc.deactivation?.by === 'delivery')
      .map(
        (doc): FailingWebhook => ({
          instance_id: doc.instance_id,
          webhook_id: doc.id,
          url: doc.url,
          failing_since: doc.deactivation!.at,
          ...(doc.deactivation!.event_type !== undefined && { event_type: doc.deactivation!.event_type }),
          ...(doc.deactivation!.response_code !== undefined && { response_code: doc.deactivation!.response_code }),
          ...(doc.deactivation!.error !== undefined && { error: doc.deactivation!.error }),
        }),
      );
    return { webhooks_failing: failing.slice(0, FAILING_WEBHOOKS_SHOWN), webhooks_failing_more: failing.length > FAILING_WEBHOOKS_SHOWN || inactive.length === FAILING_WEBHOOKS_SHOWN * 2 };
  }
}
