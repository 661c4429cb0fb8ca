/**
 * What every versioned store shares, whatever keeps its version (an SQLite file's header, a
 * MongoDB document, EventStoreDB stream metadata): steps numbered 1, 2, 3…, a recorded version
 * checked against them, and one refusal when a newer release wrote the store.
 */

/** `schema` for an SQLite file, `layout` for MongoDB's collections and EventStoreDB's streams. */
export type VersionKind = 'schema' | 'layout';

/** A store's version is newer than this code knows: a newer release wrote it. */
export class NewerVersionError extends Error {
  constructor(
    /** The file or store, as an operator knows it. */
    readonly where: string,
    readonly kind: VersionKind,
    readonly found: number,
    readonly newest: number,
  ) {
    super(
      `${where} has ${kind} version ${found}, newer than this Parley knows (up to version ${newest}): ` +
        'a newer release of Parley wrote it. Run that release (or a later one) on it; this one cannot read it safely.',
    );
    this.name = 'NewerVersionError';
  }
}

/** The steps' last version; the list must number its steps 1, 2, 3… (a programming error otherwise). */
export function newestVersion(steps: readonly { readonly version: number }[], kind: VersionKind): number {
  steps.forEach((step, i) => {
    if (step.version !== i + 1) throw new Error(`${kind} migrations must be numbered 1, 2, 3…: step ${i + 1} says ${step.version}`);
  });
  return steps.length;
}

/** The recorded version, refused when it is one this code cannot have written. */
export function checkedVersion(where: string, kind: VersionKind, version: number, newest: number): number {
  if (version > newest) throw new NewerVersionError(where, kind, version, newest);
  const what = kind === 'schema' ? 'a file' : 'a store';
  if (!Number.isInteger(version) || version < 0) throw new Error(`${where} has ${kind} version ${version}, which no release of Parley writes: it is not ${what} Parley wrote`);
  return version;
}
