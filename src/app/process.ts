/** Runs a service until SIGINT/SIGTERM, then closes it; a failed start exits non-zero with the reason. */
export function runUntilSignalled(start: () => Promise<{ close(): Promise<void> }>): void {
  start()
    .then((service) => {
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        service.close().then(
          () => process.exit(0),
          (error) => {
            console.error(error);
            process.exit(1);
          },
        );
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    })
    .catch((error) => {
      console.error(`Parley could not start: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    });
}
