/**
 * Layout versions of the stores that are not files: MongoDB's collections and EventStoreDB's
 * streams. Each records the version of its layout (how Parley names and shapes what it keeps
 * there), checked by every process at start: an older layout is brought forward step by step, a
 * newer one is refused, unchanged. The SQLite files do the same with their schema versions.
 */
import { checkedVersion, newestVersion } from './stored-versions';

/** Where a store keeps its layout version (a MongoDB document, EventStoreDB stream metadata). */
export interface LayoutVersionRecord {
  /** What is versioned, as an operator knows it: named in messages. */
  readonly name: string;
  /** The recorded version: 0 when none is (a new store, or one written before versions were recorded). */
  read(): Promise<number>;
  /** Records `to` where `from` is still recorded; false when another process recorded another version meanwhile. */
  write(from: number, to: number): Promise<boolean>;
}

/** One step of a layout: brings a store at `version - 1` to `version`. */
export interface LayoutMigration {
  readonly version: number;
  /** What the step changes, in a few words (for a reader of the list). */
  readonly description: string;
  /**
   * Runs before the version is recorded. Processes starting together may run the same step at
   * once, and one may stop halfway: a step must be safe to run again (create what is missing,
   * leave what is there).
   */
  readonly up: () => Promise<void>;
}

/** What a start found and left: the version the store had and the one it has now. */
export interface LayoutVersions {
  readonly from: number;
  readonly to: number;
}

/**
 * Brings a store's layout to the newest version this code knows, at start. Version 0 (nothing
 * recorded) is a new store or one written before versions were recorded, whose layout is
 * version 1's: version 1's step therefore creates what is missing and leaves what is there.
 * Each step runs, then its version is recorded where the one before still is; when another
 * process recorded a version meanwhile, the record is read again and the steps go on from there.
 * A store at the newest version is only read. A newer one is refused (NewerVersionError).
 */
export async function migrateLayout(record: LayoutVersionRecord, migrations: readonly LayoutMigration[]): Promise<LayoutVersions> {
  const newest = newestVersion(migrations, 'layout');
  const from = checkedVersion(record.name, 'layout', await record.read(), newest);
  let current = from;
  // Each pass records a step or finds one recorded by another process: versions only grow.
  for (let pass = 0; current < newest; pass++) {
    if (pass > 2 * newest + 10) throw new Error(`${record.name}: its layout version keeps changing under this process (at ${current}); is another process lowering it?`);
    const step = migrations[current];
    await step.up();
    current = (await record.write(current, step.version)) ? step.version : checkedVersion(record.name, 'layout', await record.read(), newest);
  }
  return { from, to: newest };
}
