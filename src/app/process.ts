import { messageOf } from '../shared/domain/errors';

/** A started service: `close` drains and releases it. */
export interface Service {
  close(): Promise<void>;
  /** How long `close` may take (SHUTDOWN_TIMEOUT_MS); past it the process exits 1 without waiting. */
  readonly shutdownTimeoutMs?: number;
}

/** SHUTDOWN_TIMEOUT_MS's default, for services that do not say. */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * Runs a service until SIGINT/SIGTERM, then closes it and exits 0; a close that fails or
 * outlasts its bound exits 1 with a line saying so, and a failed start exits 1 with the reason.
 * Further signals while closing are ignored (npm forwards Ctrl-C to its child as well).
 * A signal during the start (the embedded server may fold a long log for minutes, answering
 * probes meanwhile) exits 0 at once with a line saying so: nothing was served or acknowledged
 * yet, and what the start wrote is in committed transactions.
 */
export function runUntilSignalled(start: () => Promise<Service>): void {
  let stopping = false;
  let stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.error(`Parley stopped on ${signal} while starting, before serving anything`);
    process.exit(0);
  };
  const onSignal = (signal: NodeJS.Signals) => stop(signal);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  start()
    .then((service) => {
      stop = (signal: NodeJS.Signals) => {
        if (stopping) return;
        stopping = true;
        const timeoutMs = service.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
        // Acknowledged writes are durable already (each commit is): giving up loses no answered write.
        setTimeout(() => {
          console.error(
            `Parley did not finish draining within SHUTDOWN_TIMEOUT_MS (${timeoutMs} ms) after ${signal}: exiting, cutting what is still open`,
          );
          process.exit(1);
        }, timeoutMs);
        service.close().then(
          () => process.exit(0),
          (error) => {
            console.error(`Parley could not stop cleanly: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
            process.exit(1);
          },
        );
      };
    })
    .catch((error) => {
      console.error(`Parley could not start: ${messageOf(error)}`);
      process.exit(1);
    });
}
