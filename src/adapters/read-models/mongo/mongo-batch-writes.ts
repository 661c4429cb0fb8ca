import type { AnyBulkWriteOperation } from 'mongodb';
import { LogPosition } from '../../../shared/domain/event';
import { Document, DocumentChange } from '../../../shared/ports/read-model-store.port';
import { Row } from './mongo-queries';

/**
 * A whole-document replacement that happens only when `position` is later than the stored
 * one (or nothing is stored: the upsert then starts from `{_id}`), decided by the server in
 * the update itself. An upsert filtered on the position would instead fail with a duplicate
 * key on a newer document, and inside a transaction any write error aborts the transaction.
 */
export const replaceIfLater = (document: Document, position: LogPosition): Record<string, unknown>[] => [
  {
    $replaceWith: {
      $cond: {
        if: { $or: [{ $eq: [{ $type: '$position' }, 'missing'] }, { $lt: ['$position', position] }] },
        // $literal: the document's own values (a string starting with `$`) are data, not expressions.
        then: { _id: '$_id', doc: { $literal: document }, position: { $literal: position } },
        else: '$$ROOT',
      },
    },
  },
];

/** A batch's changes as bulk writes per collection, in batch order: changes to one document keep their order. */
export function writesByCollection(changes: readonly DocumentChange[]): Map<string, AnyBulkWriteOperation<Row>[]> {
  const byCollection = new Map<string, AnyBulkWriteOperation<Row>[]>();
  for (const change of changes) {
    let ops = byCollection.get(change.collection);
    if (!ops) byCollection.set(change.collection, (ops = []));
    ops.push(
      change.kind === 'put'
        ? {
            updateOne: {
              filter: { _id: change.document._id },
              // Through JSON, as SQLite stores it: `undefined` fields vanish instead of becoming null.
              update: replaceIfLater(JSON.parse(JSON.stringify(change.document)) as Document, change.position),
              upsert: true,
            },
          }
        : { deleteOne: { filter: { _id: change.id } } },
    );
  }
  return byCollection;
}
