import { Worker } from 'node:worker_threads';
import type { ParleyConfig } from '../../config/config';
import type { LogPosition } from '../../shared/domain/event';
import type { ProjectorRunnerStats } from '../../shared/application/projection-runtime/projector-runner';
import { projectorThreadConfig } from '../projector-thread/protocol';
import { workerScript } from '../worker-script';
import type { FoldThreadData, FromFoldThread, ToFoldThread } from './protocol';

export interface FoldThreadOptions {
  readonly config: ParleyConfig;
  readonly owner: string;
  readonly leaseTtlMs: number;
  /**
   * Events read and written per transaction (default 2,000). Its leases are renewed by its fold
   * as it goes (ProjectionLeases.keepWhileFolding), however long a page takes on a busy core.
   */
  readonly page?: number;
  /** The projections to fold there, by checkpoint name: their leases are held by `owner` already. */
  readonly checkpoints: readonly string[];
  /** Each batch the thread wrote: where its projections stand. */
  readonly onProgress?: (position: LogPosition) => void;
}

/**
 * Projections of an embedded data directory folded on a worker thread of their own
 * (fold-thread-entry.ts), up to the log's head at their start: a rebuild folds the projections kept in a
 * file of their own (message search's `search.sqlite`, with its own write lock) there, on the
 * second core, while the others fold on its main thread.
 */
export class FoldThread {
  private readonly worker: Worker;
  /** Resolves once the thread's runner holds its projections (it wrote nothing to another file since). */
  readonly started: Promise<void>;
  /** Resolves with what the thread folded once it caught up and closed its stores; rejects if it failed. */
  readonly done: Promise<ProjectorRunnerStats>;

  constructor(options: FoldThreadOptions) {
    const data: FoldThreadData = {
      config: projectorThreadConfig(options.config),
      owner: options.owner,
      leaseTtlMs: options.leaseTtlMs,
      page: options.page ?? 2_000,
      checkpoints: options.checkpoints,
    };
    this.worker = new Worker(workerScript(__dirname, 'fold-thread-entry.js', __filename), { workerData: data });
    let started: () => void = () => undefined;
    this.started = new Promise<void>((resolve) => (started = resolve));
    this.done = new Promise<ProjectorRunnerStats>((resolve, reject) => {
      const failed = (error: Error) => {
        started();
        reject(error);
      };
      this.worker.on('message', (message: FromFoldThread) => {
        switch (message.kind) {
          case 'started':
            return started();
          case 'progress':
            return options.onProgress?.(message.position);
          case 'done':
            started();
            return resolve(message.stats);
          case 'failed':
            return failed(new Error(`the fold thread of ${options.checkpoints.join(', ')} failed: ${message.error}`));
        }
      });
      this.worker.on('error', (error) => failed(error));
      this.worker.on('exit', (code) => failed(new Error(`the fold thread of ${options.checkpoints.join(', ')} exited (code ${code}) before it was done`)));
    });
    this.done.catch(() => undefined);
  }

  /** Stops the fold where it stands (its batches written are kept) and waits for the thread to end. */
  async stop(): Promise<void> {
    this.worker.postMessage({ kind: 'stop' } satisfies ToFoldThread);
    await this.done.catch(() => undefined);
    await this.worker.terminate();
  }
}
