import { RecordedEvent } from '../../../domain/event';

/** `evolve` or `targets` of one projection threw on one event. */
export class ProjectionEventError extends Error {
  constructor(
    readonly projection: string,
    readonly event: RecordedEvent,
    cause: unknown,
  ) {
    super(
      `Projection ${projection} failed on event ${event.type} at position ${event.position} (${event.streamName}): ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { cause },
    );
    this.name = 'ProjectionEventError';
  }
}
