import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { CONFIG, ParleyConfig } from '../../../config/config';
import { ArchiveTooLargeError, unpackExport } from '../../../shared/application/operations/instance-transfer/export-archive';
import {
  checkExport,
  ImportConflictError,
  importInstance,
  importRefusal,
  ImportResult,
  ImportSourceError,
} from '../../../shared/application/operations/instance-transfer/import-instance';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { SECRET_BOX, SecretBox } from '../../../shared/crypto/secret-box';
import { Actor } from '../../../shared/domain/event';
import { badRequest, conflict, DomainError, messageOf, notFound, unprocessable } from '../../../shared/domain/errors';
import { BLOB_STORE, BlobStore } from '../../../shared/ports/blob-store.port';
import { EVENT_STORE, EventStore } from '../../../shared/ports/event-store.port';
import { instanceImportDecider, instanceImportStream } from '../domain/instance-import.decider';
import { TransferSpool } from '../transfer-spool';

/** `receiving` (the upload), `checking` (the whole export and the master key, before any write), `importing`, then `done` or `failed`. */
export type ImportStatus = 'receiving' | 'checking' | 'importing' | 'done' | 'failed';

/** What `GET …/imports/:importId` answers. */
export interface ImportView {
  readonly id: string;
  readonly instance_id: string;
  readonly status: ImportStatus;
  readonly received_bytes: number;
  readonly started_at: string;
  readonly finished_at?: string;
  /** What the checked export holds (known once checked). */
  readonly events_total?: number;
  readonly blobs_total?: number;
  /** Appended now / already in the target (an earlier import of it): a second import appends nothing. */
  readonly events_appended: number;
  readonly events_present: number;
  readonly blobs_copied: number;
  readonly blobs_present: number;
  /** Why it failed, as an API error; `events_appended`/`blobs_copied` say what was written before (0: nothing). */
  readonly error?: { readonly error: string; readonly error_description: string };
}

type Job = { -readonly [K in keyof ImportView]: ImportView[K] } & { readonly actor: Actor; exportedFrom?: string; exportedAt?: string };

/** The job as `GET …/imports/:importId` shows it (who started it is in the log, once the import wrote something). */
const viewOf = ({ actor: _actor, exportedFrom: _from, exportedAt: _at, ...view }: Job): ImportView => view;

/** Finished imports kept for `GET …/imports/:importId`, newest first out last. */
const FINISHED_KEPT = 100;
const ERROR_PREFIX = 'services/parley_operator/';

const apiError = (error: DomainError) => ({ error: ERROR_PREFIX + error.code, error_description: error.description });

/**
 * Imports over HTTP, as jobs: the archive is unpacked into the spool as it arrives (at most
 * IMPORT_MAX_BYTES), then checked exactly as `npm run import` checks it (the whole export, the
 * instance, the master key; nothing written on a refusal) and loaded by the same code, which skips
 * what the target already holds. One import per instance at a time; the spool is deleted at the
 * end. Jobs live in this process (a restart forgets them; the import itself can be run again).
 */
@Injectable()
export class ImportJobs {
  private readonly logger = new Logger('import');
  private readonly jobs = new Map<string, Job>();
  readonly maxBytes: number;

  constructor(
    @Inject(CONFIG) config: ParleyConfig,
    @Inject(EVENT_STORE) private readonly log: EventStore,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(SECRET_BOX) private readonly secretBox: SecretBox,
    private readonly spool: TransferSpool,
    private readonly pipeline: CommandPipeline,
  ) {
    this.maxBytes = config.importMaxBytes;
  }

  tooLarge(): DomainError {
    return new DomainError(
      'payload_too_large',
      'archive_too_large',
      `An instance archive may have at most ${this.maxBytes} bytes (IMPORT_MAX_BYTES); nothing was written`,
    );
  }

  get(instanceId: string, importId: string): ImportView {
    const job = this.jobs.get(importId);
    if (!job || job.instance_id !== instanceId) throw notFound('import_not_found', `No import "${importId}" of instance "${instanceId}" in this server process`);
    return viewOf(job);
  }

  /**
   * Takes the archive in (413 over the cap, 400 for what is no export archive, 409 while the
   * instance has an import running) and starts its import: answers once the upload is spooled.
   */
  async receive(instanceId: string, body: Readable, declaredBytes: number | undefined, actor: Actor): Promise<ImportView> {
    if (declaredBytes !== undefined && declaredBytes > this.maxBytes) throw this.tooLarge();
    const running = [...this.jobs.values()].find((j) => j.instance_id === instanceId && j.status !== 'done' && j.status !== 'failed');
    if (running) throw conflict('import_running', `The import ${running.id} of instance "${instanceId}" is still running: wait for it to end`);
    const job: Job = {
      id: randomUUID(),
      instance_id: instanceId,
      status: 'receiving',
      received_bytes: 0,
      started_at: new Date().toISOString(),
      events_appended: 0,
      events_present: 0,
      blobs_copied: 0,
      blobs_present: 0,
      actor,
    };
    this.keep(job);
    const dir = this.spool.next('import', job.id);
    try {
      job.received_bytes = (await unpackExport(body, dir, this.maxBytes)).bytes;
    } catch (error) {
      this.spool.remove(dir);
      this.jobs.delete(job.id);
      if (error instanceof ArchiveTooLargeError) throw this.tooLarge();
      if (error instanceof ImportSourceError) throw badRequest('bad_archive', `${error.message}; nothing was written`);
      throw TransferSpool.failure(error);
    }
    job.status = 'checking';
    void this.run(job, dir);
    return viewOf(job);
  }

  private keep(job: Job): void {
    this.jobs.set(job.id, job);
    const finished = [...this.jobs.values()].filter((j) => j.status === 'done' || j.status === 'failed');
    for (const old of finished.slice(0, Math.max(0, finished.length - FINISHED_KEPT))) this.jobs.delete(old.id);
  }

  /** Who imported what, in the log, once the import wrote something (a second import of an archive writes, and records, nothing). */
  private async record(job: Job, outcome: 'done' | 'failed'): Promise<void> {
    if (job.events_appended === 0 && job.blobs_copied === 0) return;
    const now = new Date().toISOString();
    try {
      await this.pipeline.run(
        instanceImportStream(job.instance_id, job.id),
        instanceImportDecider,
        {
          type: 'RecordImport',
          outcome: {
            import_id: job.id,
            outcome,
            events_appended: job.events_appended,
            events_present: job.events_present,
            blobs_copied: job.blobs_copied,
            blobs_present: job.blobs_present,
            exported_from: job.exportedFrom ?? '',
            exported_at: job.exportedAt ?? '',
            imported_at: now,
          },
        },
        { instance_id: job.instance_id, actor: job.actor, occurred_at: now },
        { awaitProjections: [] },
      );
    } catch (error) {
      this.logger.error(`the import ${job.id} of instance ${job.instance_id} wrote ${job.events_appended} events, but its record failed: ${messageOf(error)}`);
      throw new DomainError(
        'unavailable',
        'import_not_recorded',
        `The archive was imported (${job.events_appended} events appended) but who imported it could not be recorded (${messageOf(error)})`,
      );
    }
  }

  private async run(job: Job, dir: string): Promise<void> {
    const progress = (r: ImportResult) => {
      job.events_appended = r.eventsAppended;
      job.events_present = r.eventsPresent;
      job.blobs_copied = r.blobsCopied;
      job.blobs_present = r.blobsPresent;
    };
    try {
      const checked = await checkExport(dir);
      const refusal = importRefusal(checked, { instanceId: job.instance_id, opens: (sealed) => this.secretBox.opens(sealed) });
      if (refusal) throw unprocessable(refusal.reason, `${refusal.message[0].toUpperCase()}${refusal.message.slice(1)}. Nothing was written`);
      job.exportedFrom = checked.manifest.source;
      job.exportedAt = checked.manifest.started_at;
      job.events_total = checked.events;
      job.blobs_total = checked.blobs.length;
      job.status = 'importing';
      progress(await importInstance(dir, checked, this.log, this.blobs, progress));
      await this.record(job, 'done');
      job.status = 'done';
    } catch (error) {
      await this.record(job, 'failed').catch(() => undefined);
      job.status = 'failed';
      const written = job.events_appended > 0 || job.blobs_copied > 0;
      const tail = written ? `; written before it: ${job.events_appended} events, ${job.blobs_copied} blobs (an import again skips them)` : '';
      if (error instanceof DomainError) job.error = apiError(error);
      else if (error instanceof ImportSourceError) {
        // Its messages name the directory: here, the spool's path says nothing to the caller.
        const message = error.message.split(`${dir}/`).join('').split(dir).join('the archive');
        job.error = apiError(unprocessable('bad_export', message + (written ? tail : '; nothing was written')));
      }
      else if (error instanceof ImportConflictError) job.error = apiError(conflict('import_conflict', error.message + (written ? tail : '; nothing was written')));
      else {
        this.logger.error(`the import ${job.id} of instance ${job.instance_id} failed: ${messageOf(error)}`);
        job.error = apiError(new DomainError('unavailable', 'import_failed', `The import failed (${messageOf(error)})${tail}`));
      }
    } finally {
      job.finished_at = new Date().toISOString();
      this.spool.remove(dir);
      this.keep(job);
    }
  }
}
