import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PERSONAL_DATA_RULES } from '../../src/app/personal-data-rules';
import { EventRow, eventRowsOf } from './event-log-rows';

export type { EventRow } from './event-log-rows';

/**
 * Event logs written before sealing, as a test of the offline rewrite (`data-dir:seal`) sees
 * them: the release fixture copied, the log's rows as stored, and the personal strings its
 * plaintext holds, found generically from PERSONAL_DATA_RULES (a rule added later is covered).
 */
export const RELEASE_FIXTURE = join(__dirname, '..', 'fixtures', 'release-data-dir');

/** A copy of the release fixture's files in a new directory, as private as Parley writes them (git keeps no modes). */
export function copyReleaseFixture(files: readonly string[] = ['events.sqlite', 'read-models.sqlite', 'master.key']): string {
  const dir = mkdtempSync(join(tmpdir(), 'parley-seal-'));
  for (const file of files) {
    cpSync(join(RELEASE_FIXTURE, file), join(dir, file));
    chmodSync(join(dir, file), 0o600);
  }
  return dir;
}

/** The release fixture's log rows, read from a copy (SQLite would leave its -wal and -shm files beside the fixture). */
export function releaseFixtureRows(): EventRow[] {
  const dir = copyReleaseFixture(['events.sqlite']);
  try {
    return rowsOf(join(dir, 'events.sqlite'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every row of a log file, in order, as `events` shows it (packed texts inflated). */
export function rowsOf(eventsFile: string): EventRow[] {
  return eventRowsOf(eventsFile);
}

const sealing = new Map(PERSONAL_DATA_RULES.sealing.map((rule) => [rule.type, rule]));

/** A row of a type a rule seals, still in plaintext: what the offline rewrite seals. */
export const holdsPlaintextPersonalFields = (row: EventRow): boolean =>
  sealing.has(row.type as never) && (JSON.parse(row.data) as { sealed?: unknown }).sealed === undefined;

/** Shorter strings (a team "dev") may turn up by chance in a file of ciphertext: markers are at least this long. */
const MARKER_LENGTH = 8;

function stringsIn(value: unknown, into: string[]): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsIn(item, into);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) stringsIn(item, into);
  return into;
}

/**
 * The rows whose type a rule seals and whose fields are in plaintext, each with the strings of
 * its personal fields long enough to be markers, leaving any that also occur elsewhere in the
 * log (in a stream name, a type or a field not sealed), which no sealing could remove.
 */
export function plaintextPersonalStrings(rows: readonly EventRow[]): { position: number; strings: string[] }[] {
  const found: { position: number; strings: string[] }[] = [];
  const elsewhere: string[] = [];
  for (const row of rows) {
    const rule = sealing.get(row.type as never);
    const data = JSON.parse(row.data) as Record<string, unknown>;
    const personal: Record<string, unknown> = {};
    const rest: Record<string, unknown> = { ...data };
    if (rule && data.sealed === undefined) {
      for (const field of rule.fields) {
        personal[field] = data[field];
        delete rest[field];
      }
    }
    elsewhere.push(row.stream, row.type, row.metadata, JSON.stringify(rest));
    if (Object.keys(personal).length) found.push({ position: row.position, strings: stringsIn(personal, []).filter((s) => s.length >= MARKER_LENGTH) });
  }
  const unique = (s: string) => !elsewhere.some((text) => text.includes(s));
  return found.map(({ position, strings }) => ({ position, strings: strings.filter(unique) }));
}
