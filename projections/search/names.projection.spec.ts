import { project } from '../../test/support/projection-fold';
import { documentId } from '../../src/shared/domain/streams';
import { recorded } from '../testing';
import { NAMES, namesProjection } from './names.projection';

const at = (m: number) => `2026-01-01T00:0${m}:00.000Z`;
const key = (instance: string, kind: string, id: string) => `${NAMES}|${documentId(instance, kind, id)}`;

describe('names projection', () => {
  it("keeps each user's and room's name case-folded, as renames change it", async () => {
    const docs = await project(namesProjection, [
      recorded('user-acme.alice', 'UserCreated', { id: 'alice', name: 'Alice Smith', created_at: at(1) }),
      recorded('user-acme.alice', 'UserUpdated', { name: 'ALICE Jones', updated_at: at(2) }),
      recorded('user-acme.bob', 'UserCreated', { id: 'bob', name: 'Bob', created_at: at(1) }),
      recorded('user-acme.bob', 'UserUpdated', { avatar_url: 'https://x/b.png', updated_at: at(2) }),
      recorded('room-acme.r1', 'RoomCreated', { id: 'r1', name: 'Lobby', private: true, created_at: at(1) }),
    ]);
    expect(docs.get(key('acme', 'user', 'alice'))).toEqual({ _id: documentId('acme', 'user', 'alice'), instance_id: 'acme', kind: 'user', id: 'alice', name_key: 'alice jones' });
    expect(docs.get(key('acme', 'user', 'bob'))).toMatchObject({ name_key: 'bob' });
    expect(docs.get(key('acme', 'room', 'r1'))).toEqual({ _id: documentId('acme', 'room', 'r1'), instance_id: 'acme', kind: 'room', id: 'r1', name_key: 'lobby' });
  });

  it('forgets the name of a deleted user or room, and ignores what it never saw created', async () => {
    const docs = await project(namesProjection, [
      recorded('user-acme.alice', 'UserCreated', { id: 'alice', name: 'Alice', created_at: at(1) }),
      recorded('user-acme.alice', 'UserDeleted', { deleted_at: at(2) }),
      recorded('room-acme.r1', 'RoomCreated', { id: 'r1', name: 'Lobby', private: false, created_at: at(1) }),
      recorded('room-acme.r1', 'RoomDeleted', { deleted_at: at(2) }),
      recorded('user-acme.ghost', 'UserUpdated', { name: 'Ghost', updated_at: at(3) }),
    ]);
    expect(docs.size).toBe(0);
  });
});
