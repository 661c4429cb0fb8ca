import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadModelStore } from '../../../adapters/read-models/sqlite/sqlite-read-model-store';
import { messageSearchProjection } from '../../../../projections/search/message-search.projection';
import { messageDocumentId } from '../../../../projections/messages/messages.projection';
import { searchFacets } from '../../../modules/search/domain/search-text';
import { usersProjection } from '../../../../projections/users/users.projection';
import { checkpointName, physicalCollectionSpecs } from '../../../../projections/projection';
import { LogPosition } from '../../domain/event';
import { apartFor, SplitReadModels } from './split-read-models';
import { contentsOf } from '../../../../test/support/sqlite-files';

const pos = (i: number): LogPosition => String(i).padStart(20, '0');
const search = physicalCollectionSpecs(messageSearchProjection)[0].name;
const users = physicalCollectionSpecs(usersProjection)[0].name;
const searchMark = checkpointName(messageSearchProjection);
const usersMark = checkpointName(usersProjection);
/** A message as search keeps it (its id made of its instance, room and message id, as the projection's). */
const searchDoc = (seq: number) => ({
  _id: messageDocumentId('i', 'r', seq),
  instance_id: 'i',
  room_id: 'r',
  message_id: seq,
  user_id: 'u',
  created_at: '2026-01-01T00:00:00.000Z',
  seq,
  body: 'hello',
  facets: [searchFacets.instance('i'), searchFacets.room('i', 'r'), searchFacets.sender('i', 'u')],
  has_attachment: false,
});

describe('SplitReadModels: the projections kept apart live in their own store, the rest in the main one', () => {
  let main: SqliteReadModelStore;
  let apart: SqliteReadModelStore;
  let split: SplitReadModels;
  let dir: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-split-read-models-'));
    main = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    apart = new SqliteReadModelStore(join(dir, 'search.sqlite'));
    split = new SplitReadModels(main, apartFor(apart, [messageSearchProjection]));
    await split.ensureCollections([...physicalCollectionSpecs(messageSearchProjection), ...physicalCollectionSpecs(usersProjection)]);
  });
  /** The tables a file of the data directory holds, as SQLite lists them. */
  const tablesOf = (file: string): string[] => Object.keys(contentsOf(join(dir, file)));
  afterEach(async () => {
    await split.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes each part of a batch, with its checkpoints, to its own store, and reads it back from there', async () => {
    await split.applyBatch(
      [
        { collection: search, kind: 'put', document: searchDoc(1), position: pos(1) },
        { collection: users, kind: 'put', document: { _id: 'u1', name: 'U' }, position: pos(2) },
      ],
      { [searchMark]: pos(1), [usersMark]: pos(2) },
    );
    expect(await apart.get(search, searchDoc(1)._id)).toMatchObject({ body: 'hello' });
    expect(await main.get(users, 'u1')).toMatchObject({ name: 'U' });
    expect(await main.getCheckpoint(searchMark)).toBeNull();
    expect(await apart.getCheckpoint(usersMark)).toBeNull();
    expect(Object.fromEntries(await split.getCheckpoints([searchMark, usersMark]))).toEqual({ [searchMark]: pos(1), [usersMark]: pos(2) });
    expect(await split.get(search, searchDoc(1)._id)).toMatchObject({ body: 'hello' });
    expect(await split.getMany(users, ['u1'])).toHaveLength(1);
    expect(tablesOf('read-models.sqlite')).not.toContain(`rm_${search}`);
  });

  it('takes and fences the leases of the projections kept apart in their store', async () => {
    expect(await split.acquireLease(searchMark, 'me', 10_000)).toBe(true);
    expect(await split.acquireLease(usersMark, 'me', 10_000)).toBe(true);
    expect([...(await apart.leases([searchMark, usersMark])).keys()]).toEqual([searchMark]);
    expect([...(await split.leases([searchMark, usersMark])).keys()].sort()).toEqual([searchMark, usersMark].sort());
    expect(await apart.acquireLease(searchMark, 'another', 10_000)).toBe(false);
    await split.applyBatch([{ collection: search, kind: 'put', document: searchDoc(2), position: pos(2) }], { [searchMark]: pos(2) }, [{ name: searchMark, owner: 'me' }]);
    expect(await apart.getCheckpoint(searchMark)).toBe(pos(2));
  });

  it('resets the projections kept apart in their store', async () => {
    await split.applyBatch([{ collection: search, kind: 'put', document: searchDoc(3), position: pos(3) }], { [searchMark]: pos(3) });
    await split.reset([search], [searchMark]);
    expect(await apart.getCheckpoint(searchMark)).toBeNull();
    expect(tablesOf('search.sqlite')).not.toContain(`rm_${search}`);
  });
});
