/**
 * An answer decided before the handler ran (a retry answered with its first attempt's stored
 * answer): thrown from a guard, sent as it is by the error filter, status, body and headers.
 */
export class PresetAnswer extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Readonly<Record<string, string>>,
  ) {
    super(`Answered ${status} before the handler`);
    this.name = 'PresetAnswer';
  }
}
