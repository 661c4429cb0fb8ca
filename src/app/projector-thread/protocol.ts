import type { MessagePort } from 'node:worker_threads';
import type { ParleyConfig } from '../../config/config';
import type { LogPosition } from '../../shared/domain/event';
import type { DataKeySelector } from '../../shared/domain/personal-data';
import type { ProjectionStatus } from '../../shared/application/projection-runtime/projector-runner';
import type { WebhookFailure } from '../../modules/webhooks/deliver-webhooks/webhook-delivery-worker';

/**
 * The messages between the embedded server's request thread and its projector thread
 * (worker_threads). Everything here is plain data (structured clone).
 */

/** The settings the projector thread uses (the whole configuration holds what a thread cannot be sent). */
export type ProjectorThreadConfig = Pick<
  ParleyConfig,
  'dataDir' | 'logLevel' | 'masterKey' | 'dataKeyCache' | 'projectionLeaseTtlMs' | 'projectorPartitions' | 'feedsSealItems' | 'webhookAllowedHosts' | 'webhookRetryScheduleMs' | 'webhookDeliveryTimeoutMs'
>;

export const projectorThreadConfig = (config: ParleyConfig): ProjectorThreadConfig => ({
  dataDir: config.dataDir,
  logLevel: config.logLevel,
  masterKey: config.masterKey,
  dataKeyCache: config.dataKeyCache,
  projectionLeaseTtlMs: config.projectionLeaseTtlMs,
  projectorPartitions: config.projectorPartitions,
  feedsSealItems: config.feedsSealItems,
  webhookAllowedHosts: config.webhookAllowedHosts,
  webhookRetryScheduleMs: config.webhookRetryScheduleMs,
  webhookDeliveryTimeoutMs: config.webhookDeliveryTimeoutMs,
});

/** What the projector thread is started with. */
export interface ProjectorThreadData {
  readonly config: ProjectorThreadConfig;
  /** The embedded server's stable lease owner: the thread renews what its predecessor (or a killed process) held. */
  readonly leaseOwner: string;
  /** The projections the release lists, by name and version (definitions hold functions: the thread finds them by name). */
  readonly projections: readonly { readonly name: string; readonly version: number }[];
  /** The newest position on disk, kept up to date by the request thread (SharedHead). */
  readonly head: SharedArrayBuffer;
  /** Lets a test make the thread fail (`Crash`). */
  readonly testHooks: boolean;
  /** The request thread's end of the WAL checkpoint service this thread hosts (transferred): the process runs no thread for checkpoints alone (sqlite-wal-checkpointer.ts). */
  readonly checkpoints?: MessagePort;
}

/** Request thread → projector thread. */
export type ToProjectorThread =
  /** The request thread is destroying these data keys: never open them again. */
  | { readonly kind: 'keys-destroyed'; readonly selector: DataKeySelector }
  /**
   * Plaintexts the request thread sealed, as (key id, ciphertext, plaintext) triples one after
   * the other: open the events that hold them without their keys. Posted before any destroy of
   * their keys (`keys-destroyed`).
   */
  | { readonly kind: 'sealed-texts'; readonly texts: readonly string[] }
  /** Stop folding, write what was folded, release the leases, then answer `stopped`. */
  | { readonly kind: 'stop' }
  /** Test hook (only with `testHooks`): throw out of the thread, as a bug would. */
  | { readonly kind: 'crash' }
  /** A reader waits for projections folded in the background (a search): they write what they gather now. */
  | { readonly kind: 'hurry'; readonly checkpoints: readonly string[] }
  /** Deliver the Chatkit webhooks from now on (sent again to a restarted thread), attachment links to `origin`. */
  | { readonly kind: 'deliver-webhooks'; readonly origin: string }
  /** Stop delivering webhooks (the server drains), then answer `webhooks-stopped`. */
  | { readonly kind: 'stop-webhooks' }
  /** The answer to `ask-offline-now` number `id`: who, or why presence could not say. */
  | { readonly kind: 'offline-now'; readonly id: number; readonly offline: readonly string[]; readonly error?: string }
  /** The answer to `deactivate-webhook` number `id`: done, or why not. */
  | { readonly kind: 'webhook-deactivated'; readonly id: number; readonly error?: string };

/** Projector thread → request thread. */
export type FromProjectorThread =
  /** What the projectors are, sent when anything other than positions changed. */
  | {
      readonly kind: 'state';
      readonly threadId: number;
      readonly running: readonly string[];
      readonly status: readonly ProjectionStatus[];
    }
  /** Where each projection of the last `state` stands (same order), sent after every batch, with the batches' metrics. */
  | { readonly kind: 'positions'; readonly positions: readonly (LogPosition | null)[]; readonly batches: readonly (readonly [events: number, seconds: number])[] }
  /** The serving versions have folded what was in the log at the start (the building ones started). */
  | { readonly kind: 'started' }
  /** Stopped on request: checkpoints written, leases released. */
  | { readonly kind: 'stopped' }
  /** The thread delivers the webhooks (`deliver-webhooks` started them). */
  | { readonly kind: 'webhooks-started' }
  /** Webhook deliveries stopped on request (`stop-webhooks`): their checkpoints are written. */
  | { readonly kind: 'webhooks-stopped' }
  /** Who of `userIds` is offline now (presence lives on the request thread): for a `v1.message_sent_user_offline`. */
  | { readonly kind: 'ask-offline-now'; readonly id: number; readonly instanceId: string; readonly userIds: readonly string[] }
  /** Deactivate a webhook whose every attempt of an event failed (the thread's connection to the log appends nothing). */
  | { readonly kind: 'deactivate-webhook'; readonly id: number; readonly instanceId: string; readonly webhookId: string; readonly failure: WebhookFailure };
