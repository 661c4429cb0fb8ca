import 'reflect-metadata';
import { runUntilSignalled } from '../../src/app/process';
import { startEmbedded } from '../../src/app/entry-points';
import { ALL_PROJECTIONS } from '../../projections';
import type { Document, DocumentRef, ProjectionDefinition } from '../../projections/projection';
import type { ParleyEvent } from '../../projections/events';
import { auditIndexProjection } from '../../projections/audit/audit-index.projection';

/**
 * The audit index as the release before log pointers folded it (version 4): one line per event
 * and key in columns, with a text id (the event's position and the key's place among its keys)
 * and an index on instance, key and position.
 */
const AUDIT_INDEX_V4: ProjectionDefinition<ParleyEvent, Document> = {
  ...auditIndexProjection,
  version: 4,
  collections: [
    {
      name: 'audit_index',
      indexes: [{ fields: ['instance_id', 'key', 'position'] }],
      columns: ['instance_id', 'key', 'position', 'stream', 'revision', 'type'],
    },
  ],
  targets(event) {
    return auditIndexProjection.targets(event).map((target, n) => ({ ...target, id: `${event.position}/${n}` }));
  },
  evolve(document, event, target) {
    // The line of the key at the id's place, as this release folds it, under the id of then.
    const place = Number(target.id.slice(target.id.lastIndexOf('/') + 1));
    const now = auditIndexProjection.targets(event)[place] as DocumentRef;
    const line = auditIndexProjection.evolve(null, event, now);
    return line && { ...line, _id: target.id };
  },
};

/**
 * Parley as the release before the audit index was kept as log pointers: every projection this
 * release lists, the audit index at version 4. What an operator upgrades from; built to
 * dist/test/support/release-before-audit-pointers.js and run as the embedded server (with
 * PROJECTOR_THREAD=false: the projector thread would find this release's definitions by name).
 */
export const PROJECTIONS_BEFORE: readonly ProjectionDefinition[] = ALL_PROJECTIONS.map((p) => (p.name === auditIndexProjection.name ? (AUDIT_INDEX_V4 as ProjectionDefinition) : p));

runUntilSignalled(() => startEmbedded(PROJECTIONS_BEFORE));
