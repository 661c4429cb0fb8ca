import 'reflect-metadata';
import { runUntilSignalled } from '../../src/app/process';
import { startEmbedded } from '../../src/app/entry-points';
import { ALL_PROJECTIONS } from '../../projections';
import type { ProjectionDefinition } from '../../projections/projection';
import type { CollectionSpec } from '../../src/shared/ports/read-model-store.port';

/** The collections this release keys by their fields, with whole numbers and times typed, that the release before kept by an id column. */
export const KEYED_SINCE = ['messages', 'thread_replies', 'message_search'];

/** A collection as the release before declared it: no key, its integers and times plain values. */
const before = ({ key, columns, ...spec }: CollectionSpec): CollectionSpec => ({
  ...spec,
  ...(columns && { columns: columns.map((c) => (typeof c !== 'string' && (c.type === 'integer' || c.type === 'time') ? c.name : c)) }),
});

/**
 * Parley as the release before messages and message search were keyed by their fields (their
 * tables with an `id` column, times as text): every projection this release lists, those
 * collections declared as they were then. What an operator upgrades from; built to
 * dist/test/support/release-before-keyed-collections.js and run as the embedded server (with
 * PROJECTOR_THREAD=false: the projector thread would find this release's definitions by name).
 */
export const PROJECTIONS_BEFORE: readonly ProjectionDefinition[] = ALL_PROJECTIONS.map((p) => ({
  ...p,
  collections: p.collections.map((spec) => (KEYED_SINCE.includes(spec.name) ? before(spec) : spec)),
}));

runUntilSignalled(() => startEmbedded(PROJECTIONS_BEFORE));
