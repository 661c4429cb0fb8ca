import 'reflect-metadata';
import { runUntilSignalled } from '../../src/app/process';
import { startEmbedded } from '../../src/app/entry-points';
import { ALL_PROJECTIONS } from '../../projections';
import type { ProjectionDefinition } from '../../projections/projection';

/** The collections this release keeps in columns that the release before kept as JSON documents. */
export const KEPT_IN_COLUMNS_SINCE = ['messages', 'thread_replies', 'message_search'];

/**
 * Parley as the release before the messages, thread replies and message search were kept in
 * columns: every projection this release lists, those collections declared without `columns`, so
 * their tables are made as JSON documents. What an operator upgrades from; built to
 * dist/test/support/release-before-read-model-columns.js and run as the embedded server (with
 * PROJECTOR_THREAD=false: the projector thread would find this release's definitions by name).
 */
export const PROJECTIONS_BEFORE: readonly ProjectionDefinition[] = ALL_PROJECTIONS.map((p) => ({
  ...p,
  collections: p.collections.map(({ columns, ...spec }) => (KEPT_IN_COLUMNS_SINCE.includes(spec.name) ? spec : { ...spec, ...(columns && { columns }) })),
}));

runUntilSignalled(() => startEmbedded(PROJECTIONS_BEFORE));
