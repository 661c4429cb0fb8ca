/**
 * Work every API process repeats on a timer until it is done (blob removal, pending delete
 * jobs, pending push deliveries): one pass at start and one every `intervalMs`; a pass already
 * running is joined rather than doubled; a failed pass is reported and retried by the next one.
 * `kick` asks for a pass now, when the caller knows there is work the timer would leave waiting.
 */
export class PeriodicSweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stoppedFlag = false;
  /** A kick arrived while a pass ran: that pass may have read its work list before the new work. */
  private again = false;

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
        if (this.again) {
          this.again = false;
          void this.run();
        }
      });
    return this.running;
  }

  /** Runs a pass now, or another one right after the running one. */
  kick(): void {
    if (this.stoppedFlag) return;
    if (this.running) this.again = true;
    else void this.run();
  }

  /** No new pass starts; resolves once the running one has ended. */
  async stop(): Promise<void> {
    this.stoppedFlag = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
