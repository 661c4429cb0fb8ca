/**
 * Work every API process repeats on a timer until it is done (blob removal, pending delete
 * jobs, pending push deliveries): one pass at start and one every `intervalMs`; a pass already
 * running is joined rather than doubled; a failed pass is reported and retried by the next one.
 */
export class PeriodicSweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stoppedFlag = false;

  constructor(
    private readonly pass: () => Promise<void>,
    readonly intervalMs: number,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  get stopped(): boolean {
    return this.stoppedFlag;
  }

  start(): void {
    this.timer = setInterval(() => void this.run(), this.intervalMs);
    this.timer.unref();
    void this.run();
  }

  /** Runs a pass now, or joins the one running. */
  run(): Promise<void> {
    if (this.stoppedFlag) return Promise.resolve();
    this.running ??= this.pass()
      .catch((error: unknown) => this.onFailure(error))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  /** No new pass starts; resolves once the running one has ended. */
  async stop(): Promise<void> {
    this.stoppedFlag = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
