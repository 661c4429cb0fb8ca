import { toErrorResponse } from '../../shared/http/error.filter';
import type { DomainError } from '../../shared/domain/errors';
import { EventChannel, writeAllQueued } from '../../shared/subscriptions/event-channel';

/** The streams one server has open, so that a drain can end them. */
export interface OpenStreams {
  /**
   * Ends every open stream with an end-of-stream frame carrying `reason` (a 503 makes the
   * SDKs reconnect), and every stream that opens from now on as soon as it opens.
   */
  endAll(reason: DomainError): void;
}

/** Ends a stream with `reason` as its end-of-stream status and body, under the service of `url`. */
export function endWithError(channel: EventChannel, reason: DomainError, url: string): void {
  const { status, body } = toErrorResponse(reason, url);
  channel.end(status, body);
}

/**
 * The streams one transport has open, each with the URL it was opened at (its end-of-stream
 * error names that URL's service), and the reason they all end once the server drains.
 */
export class OpenStreamSet implements OpenStreams {
  private readonly urls = new Map<EventChannel, string>();
  private endingReason: DomainError | null = null;

  /** How many streams are open. */
  get size(): number {
    return this.urls.size;
  }

  /** Why every stream ends (the server drains), or null while it serves. */
  get ending(): DomainError | null {
    return this.endingReason;
  }

  /** Counts `channel` as open until it closes; one that opened while the server drains ends at once. */
  add(channel: EventChannel, url: string): void {
    this.urls.set(channel, url);
    channel.onClose(() => this.urls.delete(channel));
    if (this.endingReason) {
      endWithError(channel, this.endingReason, url);
      writeAllQueued();
    }
  }

  endAll(reason: DomainError): void {
    this.endingReason = reason;
    for (const [channel, url] of this.urls) endWithError(channel, reason, url);
    writeAllQueued(); // the connections may close right after: the end-of-stream frames go now
  }
}
