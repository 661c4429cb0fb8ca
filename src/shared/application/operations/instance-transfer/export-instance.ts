import { createHash } from 'node:crypto';
import { closeSync, createWriteStream, fsyncSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { LogPosition, RecordedEvent } from '../../../domain/event';
import { BlobStore, assertBlobKey } from '../../../ports/blob-store.port';
import { EventStore } from '../../../ports/event-store.port';
import { makePrivateDir, openPrivateFileSync } from '../../../files/private-files';
import {
  BLOB_REMOVED,
  BLOB_UPLOADED,
  BLOBS_FILE,
  belongsTo,
  blobFile,
  EVENTS_FILE,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  ExportedBlob,
  ExportManifest,
  MANIFEST_FILE,
  toExportedEvent,
} from './transfer-format';
import { instanceEventPages } from './instance-event-pages';

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 10_000;

/** The directory already holds an export (or cannot be written): nothing was exported. */
export class ExportTargetError extends Error {}

export interface ExportProgress {
  readonly events: number;
  readonly blobs: number;
  readonly lastPosition: LogPosition | null;
}

/**
 * Writes one instance's events (in log order) and its attachments' bytes to a directory, from
 * any event and blob store (ports only). `exportToHead` copies the log as it is; `follow` then
 * tails the live log, writing each event as it arrives, until `stop()`.
 */
export class InstanceExporter {
  private eventsFd = -1;
  private blobsFd = -1;
  private events = 0;
  private blobCount = 0;
  private lastPosition: LogPosition | null = null;
  private readonly startedAt = new Date().toISOString();
  private readonly belongs: (stream: string) => boolean;
  /** Uploads whose bytes were gone at export time, by key: fine when the log later records their removal. */
  private readonly missing = new Map<string, string>();
  private stopFollowing: (() => Promise<void>) | null = null;
  private stopped = false;

  constructor(
    private readonly log: EventStore,
    private readonly blobs: BlobStore,
    private readonly instanceId: string,
    private readonly dir: string,
    private readonly source: string,
    private readonly warn: (message: string) => void,
  ) {
    this.belongs = belongsTo(instanceId);
  }

  /** Creates the directory and its files; refuses a directory that already holds an export. */
  open(): void {
    try {
      makePrivateDir(this.dir);
      const eventsFd = openPrivateFileSync(join(this.dir, EVENTS_FILE), 'wx');
      try {
        this.blobsFd = openPrivateFileSync(join(this.dir, BLOBS_FILE), 'wx');
      } catch (error) {
        closeSync(eventsFd);
        throw error;
      }
      this.eventsFd = eventsFd;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new ExportTargetError(
        code === 'EEXIST'
          ? `${this.dir} already holds an export: choose another --out directory`
          : `cannot write the export to ${this.dir} (${code ?? String(error)})`,
      );
    }
    this.writeManifest(false);
  }

  /**
   * Exports every event of the instance up to the head of the log as it is now; a `stop()`
   * meanwhile ends it after the current page (then `reachedHead` is false).
   */
  async exportToHead(onProgress?: (p: ExportProgress) => void): Promise<ExportProgress & { reachedHead: boolean }> {
    if (this.stopped) return { ...this.progress(), reachedHead: false };
    for await (const page of instanceEventPages(this.log, this.instanceId, this.lastPosition)) {
      const lines: string[] = [];
      for (const event of page.events) lines.push(await this.lineFor(event));
      this.lastPosition = page.lastPosition;
      this.append(this.eventsFd, lines);
      onProgress?.(this.progress());
      if (this.stopped) return { ...this.progress(), reachedHead: false };
    }
    return { ...this.progress(), reachedHead: true };
  }

  /**
   * Tails the live log from the last exported position, writing each event of the instance
   * as it arrives, until `stop()`.
   */
  async follow(onEvent?: (p: ExportProgress) => void): Promise<ExportProgress> {
    let retryMs = FIRST_RETRY_MS;
    while (!this.stopped) {
      const subscription = this.log.subscribeToAll({ after: this.lastPosition });
      this.stopFollowing = () => subscription.close();
      try {
        for await (const event of subscription) {
          if (this.belongs(event.streamName)) {
            this.append(this.eventsFd, [await this.lineFor(event)]);
            onEvent?.(this.progress());
          }
          this.lastPosition = event.position;
          retryMs = FIRST_RETRY_MS;
        }
      } catch (error) {
        if (this.stopped) break;
        // A dropped subscription (a store restart, a leader change) resumes from the last event written.
        this.warn(`the live log subscription dropped (${(error as Error).message}); resubscribing in ${retryMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, retryMs);
          this.stopFollowing = async () => (clearTimeout(timer), resolve());
        });
        retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
      } finally {
        await subscription.close();
      }
    }
    return this.progress();
  }

  /** Ends `follow` after the event it is writing, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.stopFollowing?.();
  }

  /** Flushes the files to disk and marks the export complete; warns of bytes that were gone. */
  close(complete: boolean): ExportProgress {
    if (this.eventsFd < 0) return this.progress(); // never opened (or closed): the directory is not ours to touch
    for (const [key, attachment] of this.missing) {
      this.warn(`the bytes of attachment ${attachment} (blob ${key}) are missing from the source blob store: exported without them`);
    }
    for (const fd of [this.eventsFd, this.blobsFd]) {
      if (fd < 0) continue;
      fsyncSync(fd);
      closeSync(fd);
    }
    this.eventsFd = this.blobsFd = -1;
    this.writeManifest(complete);
    return this.progress();
  }

  private progress(): ExportProgress {
    return { events: this.events, blobs: this.blobCount, lastPosition: this.lastPosition };
  }

  /** The event's line; an upload's bytes are copied (and listed) first, so a reader never meets a key before its bytes. */
  private async lineFor(event: RecordedEvent): Promise<string> {
    const data = event.data as { id?: string; blob_key?: string; sha256?: string };
    if (event.type === BLOB_UPLOADED && typeof data.blob_key === 'string') {
      await this.copyBlob(data.blob_key, String(data.id), data.sha256);
    } else if (event.type === BLOB_REMOVED && typeof data.blob_key === 'string') {
      this.missing.delete(data.blob_key);
    }
    this.events++;
    return JSON.stringify(toExportedEvent(event));
  }

  private async copyBlob(key: string, attachmentId: string, recordedSha256: string | undefined): Promise<void> {
    assertBlobKey(key);
    const blob = await this.blobs.get(key);
    if (!blob) {
      this.missing.set(key, attachmentId);
      return;
    }
    const file = blobFile(this.dir, key);
    makePrivateDir(dirname(file));
    const hash = createHash('sha256');
    let size = 0;
    const measure = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    await pipeline(blob.stream, measure, createWriteStream(file, { fd: openPrivateFileSync(file, 'w') }));
    const sha256 = hash.digest('hex');
    if (recordedSha256 && sha256 !== recordedSha256) {
      this.warn(`the bytes of attachment ${attachmentId} (blob ${key}) do not match the SHA-256 its upload recorded: exported as stored`);
    }
    const entry: ExportedBlob = { key, content_type: blob.contentType, size, sha256 };
    this.append(this.blobsFd, [JSON.stringify(entry)]);
    this.blobCount++;
  }

  private append(fd: number, lines: readonly string[]): void {
    if (lines.length) writeSync(fd, lines.join('\n') + '\n');
  }

  /** Written whole beside, then renamed: a reader sees the old manifest or the new one. */
  private writeManifest(complete: boolean): void {
    const manifest: ExportManifest = {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      instance_id: this.instanceId,
      source: this.source,
      started_at: this.startedAt,
      complete,
      ...(complete && { finished_at: new Date().toISOString() }),
      events: this.events,
      blobs: this.blobCount,
      last_position: this.lastPosition,
    };
    const file = join(this.dir, MANIFEST_FILE);
    const fd = openPrivateFileSync(`${file}.tmp`, 'w');
    try {
      writeSync(fd, JSON.stringify(manifest, null, 2) + '\n');
    } finally {
      closeSync(fd);
    }
    renameSync(`${file}.tmp`, file);
  }
}
