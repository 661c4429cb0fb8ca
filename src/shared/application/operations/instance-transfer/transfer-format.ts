import { join } from 'node:path';
import type { SealedSecret } from '../../../crypto/secret-box';
import { EventMetadata, RecordedEvent } from '../../../domain/event';
import { parseStreamName } from '../../../domain/streams';

/**
 * An instance export is a directory:
 * - `manifest.json`: format, instance, source, counts, last exported log position;
 * - `events.ndjson`: the instance's events in log order, one `ExportedEvent` per line;
 * - `blobs.ndjson`: one `ExportedBlob` per line, written before the event that names the blob;
 * - `blobs/<blob key>`: the bytes.
 * Lines are appended as they are exported (a `--follow` export grows them while it runs).
 */
export const MANIFEST_FILE = 'manifest.json';
export const EVENTS_FILE = 'events.ndjson';
export const BLOBS_FILE = 'blobs.ndjson';
export const BLOBS_DIR = 'blobs';

export const EXPORT_FORMAT = 'parley-instance-export';
export const EXPORT_VERSION = 1;

export interface ExportManifest {
  readonly format: typeof EXPORT_FORMAT;
  readonly version: typeof EXPORT_VERSION;
  readonly instance_id: string;
  /** Which stores the events came from (no secrets, no paths beyond DATA_DIR). */
  readonly source: string;
  readonly started_at: string;
  /** False while the export runs (or when it was killed): the files may hold fewer lines than the log. */
  readonly complete: boolean;
  readonly finished_at?: string;
  readonly events: number;
  readonly blobs: number;
  /** The source log position up to which the export holds every event of the instance (meaningful for that store only). */
  readonly last_position: string | null;
}

export interface ExportedEvent {
  readonly stream: string;
  readonly revision: number;
  readonly id: string;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: EventMetadata;
  readonly recorded_at: string;
  /** Its position in the source log, for reference: the target log numbers events its own way. */
  readonly position: string;
}

export interface ExportedBlob {
  readonly key: string;
  readonly content_type: string;
  readonly size: number;
  /** Hex SHA-256 of the bytes, as the upload recorded it. */
  readonly sha256: string;
}

export const toExportedEvent = (e: RecordedEvent): ExportedEvent => ({
  stream: e.streamName,
  revision: e.revision,
  id: e.id,
  type: e.type,
  data: e.data,
  metadata: e.metadata,
  recorded_at: e.recordedAt,
  position: e.position,
});

/**
 * Whether a stream belongs to the instance: every stream of an instance is
 * `<category>-<instance>.<id>` or `<category>-<instance>` (see src/shared/domain/streams.ts),
 * so this also takes categories added after this code was written.
 */
export const belongsTo = (instanceId: string) => (streamName: string): boolean =>
  parseStreamName(streamName)?.instanceId === instanceId;

/** Where a blob's bytes lie in an export directory (keys are checked by `assertBlobKey` first). */
export const blobFile = (dir: string, key: string): string => join(dir, BLOBS_DIR, ...key.split('/'));

/** The upload events that name blobs (attachments and files API uploads). */
export const BLOB_UPLOADED = 'AttachmentUploaded';
export const BLOB_REMOVED = 'AttachmentBlobRemoved';

/** The first sealed secret anywhere in an event's data (key secrets, Beams subscriptions), or null. */
export function findSealed(value: unknown, depth = 0): SealedSecret | null {
  if (value === null || typeof value !== 'object' || depth > 8) return null;
  const v = value as Record<string, unknown>;
  if (v.alg === 'aes-256-gcm' && typeof v.iv === 'string' && typeof v.tag === 'string' && typeof v.ciphertext === 'string') {
    return v as unknown as SealedSecret;
  }
  for (const child of Object.values(v)) {
    const found = findSealed(child, depth + 1);
    if (found) return found;
  }
  return null;
}
