import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { growingLru } from '../../../growing-lru';
import { pipeline, Transform } from 'node:stream';
import type { SealedSecret } from '../../../crypto/secret-box';
import { BlobStore, assertBlobKey, assertContentType } from '../../../ports/blob-store.port';
import { AppendTooLargeError, EventStore, EventToAppend, WrongExpectedRevisionError, appendSize } from '../../../ports/event-store.port';
import {
  BLOBS_FILE,
  belongsTo,
  blobFile,
  EVENTS_FILE,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  ExportedBlob,
  ExportedEvent,
  ExportManifest,
  findSealed,
  MANIFEST_FILE,
} from './transfer-format';

/**
 * Appends at most this many events of one stream at once, and no more bytes than the target
 * takes in one append (its `maxAppendBytes`: EventStoreDB refuses larger appends).
 */
const BATCH = 200;
/**
 * Streams whose revision is remembered (every message has a stream of its own, so an instance
 * has about as many streams as messages). Past it, the check takes a forgotten stream's
 * revision on trust and the import reads it from the target; each append still checks it.
 */
const STREAMS_REMEMBERED = 100_000;

/** The export directory is not one this code can load (nothing was written when thrown by `check`). */
export class ImportSourceError extends Error {}

/**
 * The target store already holds other events where the export has some: the instance was
 * created there independently (a bootstrap, other traffic). Events before it were imported.
 */
export class ImportConflictError extends Error {}

export interface CheckedExport {
  readonly manifest: ExportManifest;
  readonly events: number;
  /** The first sealed secret of the export: the target's master key must open it. */
  readonly sealed: SealedSecret | null;
  readonly blobs: readonly ExportedBlob[];
  /** The export's first event (the instance's creation, in an export of its whole history). */
  readonly first: ExportedEvent | null;
}

export interface ImportResult {
  readonly eventsAppended: number;
  readonly eventsPresent: number;
  readonly blobsCopied: number;
  readonly blobsPresent: number;
}

/** The lines of an NDJSON file; an unterminated last line (an export killed while writing it) is left out. */
async function* ndjsonLines(file: string): AsyncGenerator<{ line: string; number: number }> {
  if (!existsSync(file)) return;
  const size = statSync(file).size;
  let read = 0;
  let number = 0;
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    number++;
    read += Buffer.byteLength(line, 'utf8') + 1;
    if (read > size) return; // the last line had no newline
    if (line.trim() === '') continue;
    yield { line, number };
  }
}

function parseLine<T>(file: string, line: string, number: number): T {
  try {
    return JSON.parse(line) as T;
  } catch {
    throw new ImportSourceError(`${file}, line ${number}: not JSON`);
  }
}

function checkEvent(e: ExportedEvent, where: string, belongs: (s: string) => boolean): void {
  const ok =
    e !== null &&
    typeof e === 'object' &&
    typeof e.stream === 'string' &&
    Number.isSafeInteger(e.revision) &&
    e.revision >= 0 &&
    typeof e.id === 'string' &&
    e.id !== '' &&
    typeof e.type === 'string' &&
    e.type !== '' &&
    e.metadata !== null &&
    typeof e.metadata === 'object' &&
    typeof e.recorded_at === 'string' &&
    !Number.isNaN(Date.parse(e.recorded_at));
  if (!ok) throw new ImportSourceError(`${where}: not an exported event (stream, revision, id, type, data, metadata, recorded_at)`);
  if (!belongs(e.stream)) throw new ImportSourceError(`${where}: the stream ${e.stream} is not one of the instance's`);
}

/**
 * Reads the whole export once before anything is written: the manifest, every event line
 * (well formed, the instance's own streams, each stream's revisions from 0 without a gap) and
 * every blob (a valid key, its file present with the listed size).
 */
export async function checkExport(dir: string): Promise<CheckedExport> {
  const manifestFile = join(dir, MANIFEST_FILE);
  if (!existsSync(manifestFile)) throw new ImportSourceError(`${dir} holds no ${MANIFEST_FILE}: not an instance export`);
  let manifest: ExportManifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as ExportManifest;
  } catch {
    throw new ImportSourceError(`${manifestFile} is not JSON`);
  }
  if (manifest?.format !== EXPORT_FORMAT) throw new ImportSourceError(`${manifestFile} is not a Parley instance export manifest`);
  if (manifest.version !== EXPORT_VERSION) {
    throw new ImportSourceError(`${manifestFile} has format version ${String(manifest.version)}; this Parley reads version ${EXPORT_VERSION}`);
  }
  if (typeof manifest.instance_id !== 'string' || manifest.instance_id === '') throw new ImportSourceError(`${manifestFile} names no instance`);
  if (!existsSync(join(dir, EVENTS_FILE))) throw new ImportSourceError(`${dir} holds no ${EVENTS_FILE}`);

  const belongs = belongsTo(manifest.instance_id);
  const revisions = growingLru<string, number>(STREAMS_REMEMBERED);
  let events = 0;
  let sealed: SealedSecret | null = null;
  let first: ExportedEvent | null = null;
  for await (const { line, number } of ndjsonLines(join(dir, EVENTS_FILE))) {
    const where = `${EVENTS_FILE}, line ${number}`;
    const event = parseLine<ExportedEvent>(EVENTS_FILE, line, number);
    checkEvent(event, where, belongs);
    const known = revisions.get(event.stream);
    const expected = known === undefined ? (revisions.size < STREAMS_REMEMBERED ? 0 : event.revision) : known + 1;
    if (event.revision !== expected) {
      throw new ImportSourceError(`${where}: ${event.stream} revision ${event.revision} where ${expected} was expected`);
    }
    revisions.set(event.stream, event.revision);
    sealed ??= findSealed(event.data);
    first ??= event;
    events++;
  }

  const blobs: ExportedBlob[] = [];
  for await (const { line, number } of ndjsonLines(join(dir, BLOBS_FILE))) {
    const where = `${BLOBS_FILE}, line ${number}`;
    const blob = parseLine<ExportedBlob>(BLOBS_FILE, line, number);
    try {
      assertBlobKey(blob?.key);
      assertContentType(blob.content_type);
    } catch (error) {
      throw new ImportSourceError(`${where}: ${(error as Error).message}`);
    }
    if (!blob.key.startsWith(`${manifest.instance_id}/`)) throw new ImportSourceError(`${where}: the blob ${blob.key} is not one of the instance's`);
    if (!Number.isSafeInteger(blob.size) || typeof blob.sha256 !== 'string') throw new ImportSourceError(`${where}: no size or sha256`);
    const file = blobFile(dir, blob.key);
    if (!existsSync(file) || statSync(file).size !== blob.size) {
      throw new ImportSourceError(`${where}: the bytes of blob ${blob.key} are missing or cut short in the export`);
    }
    blobs.push(blob);
  }
  return { manifest, events, sealed, blobs, first };
}

/** Why a checked export cannot go into the target as it is (nothing written), or null. */
export interface ImportRefusal {
  readonly reason: 'wrong_instance' | 'wrong_master_key';
  readonly message: string;
}

/**
 * The target's side of the check, after `checkExport`: the export is of the instance asked for
 * (an export is imported under its own id: ids are in tokens, event data and blob keys), and its
 * key secrets open with the target's master key (Parley does not re-seal them).
 */
export function importRefusal(checked: CheckedExport, target: { instanceId?: string; opens(sealed: SealedSecret): boolean }): ImportRefusal | null {
  const exported = checked.manifest.instance_id;
  if (target.instanceId !== undefined && target.instanceId !== exported) {
    return { reason: 'wrong_instance', message: `the archive is an export of instance "${exported}", not "${target.instanceId}"` };
  }
  if (checked.sealed && !target.opens(checked.sealed)) {
    return {
      reason: 'wrong_master_key',
      message:
        "the target's master key (MASTER_KEY, or master.key in DATA_DIR) is not the one the export's key secrets were sealed with. " +
        "Parley does not re-seal them: use the source's master key for the target",
    };
  }
  return null;
}

/**
 * Loads a checked export into any event and blob store, idempotently: blobs first (a key that
 * is already there is kept), then the events in the export's order, each stream appended with
 * its expected revision and the original ids, data, metadata and recorded times. Events that
 * the target stream already holds with the same ids are skipped, so a second import (or one
 * resumed after a failure) writes nothing twice. Read models catch up through the projectors.
 */
export async function importInstance(
  dir: string,
  checked: CheckedExport,
  log: EventStore,
  blobs: BlobStore,
  onProgress?: (r: ImportResult) => void,
): Promise<ImportResult> {
  const first = checked.first;
  if (first) {
    // The usual conflict (the instance created in the target apart from the export, e.g. by a
    // bootstrap) shows on the first event: refuse it before copying anything.
    const [there] = await log.readStream(first.stream, { fromRevision: first.revision, maxCount: 1 });
    if (there && there.id !== first.id) throw conflictAt(first, there);
  }
  let blobsCopied = 0;
  let blobsPresent = 0;
  let eventsAppended = 0;
  let eventsPresent = 0;
  for (const blob of checked.blobs) {
    if (await blobs.exists(blob.key)) {
      blobsPresent++;
    } else {
      await copyBlobIn(dir, blob, blobs);
      blobsCopied++;
    }
    onProgress?.({ eventsAppended, eventsPresent, blobsCopied, blobsPresent });
  }

  /** The target's revision of each stream seen so far (-1: no stream). */
  const revisions = growingLru<string, number>(STREAMS_REMEMBERED);
  let batch: ExportedEvent[] = [];

  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const events = batch;
    batch = [];
    const stream = events[0].stream;
    let current = revisions.get(stream);
    if (current === undefined) {
      const [last] = await log.readStream(stream, { direction: 'backwards', maxCount: 1 });
      current = last ? last.revision : -1;
    }
    const present = events.filter((e) => e.revision <= current!);
    if (present.length) {
      const stored = await log.readStream(stream, { fromRevision: present[0].revision, maxCount: present.length });
      present.forEach((e, i) => {
        if (stored[i]?.id !== e.id) throw conflictAt(e, stored[i]);
      });
      eventsPresent += present.length;
    }
    const missing = events.filter((e) => e.revision > current!);
    if (missing.length) {
      if (missing[0].revision !== current + 1) {
        throw new ImportConflictError(`the target's stream ${stream} ends at revision ${current}, before the export's revision ${missing[0].revision}`);
      }
      try {
        current = await appendInParts(log, stream, missing, current);
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError) {
          throw new ImportConflictError(`another writer appended to ${stream} during the import; nothing of this batch was written: run the import again`);
        }
        throw error;
      }
      eventsAppended += missing.length;
    }
    revisions.set(stream, current);
    onProgress?.({ eventsAppended, eventsPresent, blobsCopied, blobsPresent });
  };

  const maxBytes = log.maxAppendBytes ?? Infinity;
  let batchBytes = 0;
  let read = 0;
  for await (const { line, number } of ndjsonLines(join(dir, EVENTS_FILE))) {
    // Only what was checked: an export still following may have written more since.
    if (read++ === checked.events) break;
    const event = parseLine<ExportedEvent>(EVENTS_FILE, line, number);
    const bytes = appendSize([toAppend(event)]);
    // Consecutive events of one stream go in one append; a change of stream keeps the log order.
    if (batch.length && (batch[0].stream !== event.stream || batch.length >= BATCH || batchBytes + bytes > maxBytes)) {
      await flush();
      batchBytes = 0;
    }
    batch.push(event);
    batchBytes += bytes;
  }
  await flush();
  return { eventsAppended, eventsPresent, blobsCopied, blobsPresent };
}

const toAppend = (e: ExportedEvent): EventToAppend => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata, recordedAt: e.recorded_at });

/**
 * Appends consecutive events of one stream after revision `current`, in halves when the target
 * refuses them as too large together (a limit lower than it declared); returns the new revision.
 * An event too large on its own stops the import.
 */
async function appendInParts(log: EventStore, stream: string, events: readonly ExportedEvent[], current: number): Promise<number> {
  try {
    return (await log.append(stream, events.map(toAppend), current === -1 ? 'no_stream' : current)).nextExpectedRevision;
  } catch (error) {
    if (!(error instanceof AppendTooLargeError)) throw error;
    if (events.length === 1) {
      const [e] = events;
      throw new ImportSourceError(
        `the event ${e.type} ${e.id} (${e.stream} revision ${e.revision}) is ${error.bytes} bytes, more than the target event log takes in one append ` +
          `(${error.maxBytes}); raise its limit (EventStoreDB: EVENTSTORE_MAX_APPEND_SIZE) and run the import again`,
      );
    }
    const half = Math.ceil(events.length / 2);
    return appendInParts(log, stream, events.slice(half), await appendInParts(log, stream, events.slice(0, half), current));
  }
}

/**
 * The target holds another event where the export has one. At a stream's start, the instance
 * (or that user, room…) was created in the target apart from the export; further on, the target
 * took writes of its own after an earlier import of this instance, and the two histories
 * diverge there: importing past it would interleave two histories (a message twice, under two
 * ids), so the import stops.
 */
const conflictAt = (exported: ExportedEvent, stored: { type: string; id: string } | undefined) => {
  const where =
    `the target's stream ${exported.stream} holds another event at revision ${exported.revision} ` +
    `(${stored?.type ?? 'none'} ${stored?.id ?? ''} instead of ${exported.type} ${exported.id}): `;
  return new ImportConflictError(
    exported.revision === 0
      ? where +
          'the instance exists there already, created apart from this export (a bootstrap with INSTANCE_KEY?). ' +
          'Import into stores where it does not exist yet, and start the server there only after the import.'
      : where +
          'the target took writes of its own after an earlier import, so its history and the export\'s diverge there. ' +
          'In a cut-over the target must take no writes until its last import (stop writes on the source, import, then move the writers).',
  );
};

/** Copies one blob's bytes into the store, checking them against the export's SHA-256 on the way. */
async function copyBlobIn(dir: string, blob: ExportedBlob, blobs: BlobStore): Promise<void> {
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  // pipeline() passes a read error on to `source`, so the put fails and stores nothing.
  const source = pipeline(createReadStream(blobFile(dir, blob.key)), hashing, () => undefined);
  await blobs.put(blob.key, source, { contentType: blob.content_type });
  if (hash.digest('hex') !== blob.sha256) {
    await blobs.delete(blob.key);
    throw new ImportSourceError(`the bytes of blob ${blob.key} in the export do not match their SHA-256: the blob was not imported`);
  }
}
