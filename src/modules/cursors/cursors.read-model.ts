import { Inject, Injectable } from '@nestjs/common';
import { LogPosition, positionAfter, RecordedEvent } from '../../shared/domain/event';
import { READ_MODEL_STORE, ReadModelStore, StoredDocument } from '../../shared/ports/read-model-store.port';
import {
  cursorsProjection,
  READ_CURSORS,
  ReadCursorDocument,
  readCursorDocumentId,
} from '../../../projections/cursors/cursors.projection';
import { checkpointName } from '../../../projections/projection';
import { cursorOfEvent, presentCursor, ReadCursor } from './presentation/cursor.presenter';

/**
 * Cursors read together with the log positions they reflect, so a subscription that buffered
 * live events while reading can skip those the snapshot already shows (see `shows`).
 */
export interface CursorSnapshot {
  readonly cursors: ReadCursor[];
  /** Every event up to here is reflected (the projection's checkpoint, read before the documents). */
  readonly checkpoint: LogPosition | null;
  /** `room_id` + `user_id` → the position of the last event folded into that cursor. */
  readonly positions: ReadonlyMap<string, LogPosition>;
}

const cursorKey = (roomId: string, userId: string) => JSON.stringify([roomId, userId]);

/** True when `event` is a `ReadCursorSet` that the snapshot already reflects (or not a cursor set at all). */
export const snapshotShows = (snapshot: CursorSnapshot, event: RecordedEvent): boolean => {
  const cursor = cursorOfEvent(event);
  if (!cursor) return true;
  if (!positionAfter(event.position, snapshot.checkpoint)) return true;
  const seen = snapshot.positions.get(cursorKey(cursor.room_id, cursor.user_id));
  return seen !== undefined && !positionAfter(event.position, seen);
};

/** Reads of the read cursors read model, for the cursors API and for other contexts (user subscription, unread counts). */
@Injectable()
export class CursorsReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** The user's cursor in the room, or null when none has been set. */
  async cursor(instanceId: string, roomId: string, userId: string): Promise<ReadCursor | null> {
    const doc = await this.readModels.get<ReadCursorDocument>(READ_CURSORS, readCursorDocumentId(instanceId, roomId, userId));
    return doc && presentCursor(doc);
  }

  /** All of the user's cursors, by room id. */
  async cursorsOfUser(instanceId: string, userId: string): Promise<ReadCursor[]> {
    return (await this.snapshotOfUser(instanceId, userId)).cursors;
  }

  /** All cursors set in the room, by user id. */
  async cursorsOfRoom(instanceId: string, roomId: string): Promise<ReadCursor[]> {
    return (await this.snapshotOfRoom(instanceId, roomId)).cursors;
  }

  snapshotOfUser(instanceId: string, userId: string): Promise<CursorSnapshot> {
    return this.snapshot({ instance_id: instanceId, user_id: userId }, 'room_id');
  }

  snapshotOfRoom(instanceId: string, roomId: string): Promise<CursorSnapshot> {
    return this.snapshot({ instance_id: instanceId, room_id: roomId }, 'user_id');
  }

  private async snapshot(where: Record<string, string>, sortBy: 'room_id' | 'user_id'): Promise<CursorSnapshot> {
    const checkpoint = await this.readModels.getCheckpoint(checkpointName(cursorsProjection));
    const stored: StoredDocument<ReadCursorDocument>[] = await this.readModels.findStored<ReadCursorDocument>(
      READ_CURSORS,
      { where, sort: [{ field: sortBy }] },
    );
    return {
      cursors: stored.map((s) => presentCursor(s.document)),
      checkpoint,
      positions: new Map(stored.map((s) => [cursorKey(s.document.room_id, s.document.user_id), s.position])),
    };
  }
}
