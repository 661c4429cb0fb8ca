import { ReadYourWrites } from '../application/write-path/read-your-writes';
import { DomainError } from '../domain/errors';
import { RecordedEvent } from '../domain/event';
import { INSTANCE_WIPED, instanceWipesStream } from '../domain/instance-wipe';
import { EventChannel } from './event-channel';
import { LiveLog } from './live-log';
import { endForFailure } from './wire-event';

export interface CatchUpThenLiveOptions<Initial> {
  readonly liveLog: LiveLog;
  readonly readYourWrites: ReadYourWrites;
  readonly channel: EventChannel;
  /** The service in the error strings of a failed stream (`services/<service>/…`), e.g. `chatkit`. */
  readonly service: string;
  /** The instance the stream shows: a wipe of it ends the stream, and the client resubscribes to what is left. */
  readonly instanceId: string;
  /** LiveLog keys to follow: stream names or keys that routers derive. */
  readonly keys: readonly string[];
  /** Checkpoint names (`<name>_v<version>`) of the projections `readInitial` reads. */
  readonly projections: readonly string[];
  /**
   * Reads the read models and pushes the initial events. It may reflect events that are also
   * delivered live afterwards (the projections go on folding while it reads): `deliver`
   * skips those, which is why what it returns is handed to `deliver`.
   */
  readonly readInitial: () => Promise<Initial>;
  /**
   * Hands one live event to the client, in log order, unless the initial read already showed
   * it. Returns a promise only when it must read first: later events then wait behind it. A
   * throw or a rejection ends the stream with a 503 that clients reconnect on.
   */
  readonly deliver: (event: RecordedEvent, initial: Initial) => void | Promise<void>;
}

/**
 * The switch from stored state to live events, without a gap or a repeat, that every
 * subscription makes: listen to the live log first (buffering), wait until the projections
 * the initial read depends on have folded everything the live log had dispatched by then,
 * read, deliver the buffer in order and go live.
 *
 * Nothing here waits for a new write: with an empty log (position null) there is nothing to
 * wait for, and projections already at the live log's position answer the wait at once.
 * Live delivery stays synchronous (no promise per subscriber in a fan-out) until an event
 * must wait on a read. An error while opening rejects (the transport answers it before the
 * stream opens); an error once live ends the stream with a 503 end-of-stream.
 */
export async function openCatchUpThenLive<Initial>(options: CatchUpThenLiveOptions<Initial>): Promise<void> {
  const { liveLog, readYourWrites, channel, deliver } = options;
  let buffer: RecordedEvent[] | null = [];
  let initial: Initial;
  let failed = false;
  /** The delivery still waiting on a read, if any: later events chain behind it. */
  let waitingOn: Promise<void> | null = null;

  const removals = options.keys.map((key) => liveLog.on(key, (event) => (buffer ? buffer.push(event) : enqueue(event))));
  removals.push(
    liveLog.on(instanceWipesStream(options.instanceId), (event) => {
      if (event.type !== INSTANCE_WIPED || failed) return;
      failed = true;
      stopListening();
      channel.end(503, {
        error: `services/${options.service}/unavailable/instance_wiped`,
        error_description: 'The instance was wiped; subscribe again to see what it holds now',
      });
    }),
  );
  let listening = true;
  const stopListening = () => {
    // Once only: a LiveLog removal run twice could drop a later listener set of the same key.
    if (!listening) return;
    listening = false;
    for (const remove of removals) remove();
  };
  channel.onClose(stopListening);

  const fail = (error: unknown) => {
    if (failed) return;
    failed = true;
    stopListening();
    endForFailure(channel, options.service, error);
  };
  const run = (event: RecordedEvent): void | Promise<void> => {
    if (failed) return;
    try {
      return deliver(event, initial);
    } catch (error) {
      fail(error);
    }
  };
  const waitBehind = (delivery: Promise<void>) => {
    const settled: Promise<void> = delivery.then(
      () => {
        if (waitingOn === settled) waitingOn = null;
      },
      (error: unknown) => {
        if (waitingOn === settled) waitingOn = null;
        fail(error);
      },
    );
    waitingOn = settled;
  };
  const enqueue = (event: RecordedEvent) => {
    if (waitingOn) {
      waitBehind(waitingOn.then(() => run(event)));
      return;
    }
    const delivery = run(event);
    if (delivery) waitBehind(delivery);
  };

  // Everything dispatched before the listeners were attached is in these projections after the wait.
  const dispatched = liveLog.position;
  if (dispatched !== null) {
    await readYourWrites.waitFor(dispatched, options.projections).catch((error: unknown) => {
      // The wait's own error speaks of a saved change; a subscription saved nothing.
      if (error instanceof DomainError && error.reason === 'projection_lag') {
        throw new DomainError('unavailable', 'projection_lag', 'The read models are behind the log; subscribe again shortly');
      }
      throw error;
    });
  }
  initial = await options.readInitial();
  const pending = buffer;
  buffer = null;
  for (const event of pending) enqueue(event);
}
