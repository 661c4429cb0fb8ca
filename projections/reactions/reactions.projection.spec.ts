import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { LATEST_REACTIONS, REACTION_SUMMARIES, REACTIONS, reactionsProjection, SHADOW_REACTIONS } from './reactions.projection';

const added = (message: number, type: string, user: string, room = 'r1', instance = 'acme') =>
  recorded(`message-${instance}.${message}`, 'MessageReactionAdded', {
    id: message,
    room_id: room,
    type,
    user_id: user,
    user_created_at: 'u0',
    created_at: `t-${user}-${type}`,
  });
const removed = (message: number, type: string, user: string, room = 'r1') =>
  recorded(`message-acme.${message}`, 'MessageReactionRemoved', { id: message, room_id: room, type, user_id: user, user_created_at: 'u0', removed_at: 't' });

const of = (docs: Map<string, { [k: string]: unknown }>, collection: string) =>
  [...docs.entries()].filter(([key]) => key.startsWith(`${collection}|`)).map(([, doc]) => doc);
const who = (docs: Map<string, { [k: string]: unknown }>) => of(docs, REACTIONS).map((d) => `${d.message_id}:${d.type}:${d.user_id}`).sort();

describe('reactions projection', () => {
  it('keeps one document per reaction and a summary per message: counts per type, the newest first', async () => {
    const docs = await project(reactionsProjection, [added(1, '👍', 'ann'), added(1, '👍', 'ben'), added(1, '🎉', 'ann'), added(2, '👍', 'ann')]);
    expect(who(docs)).toEqual(['1:🎉:ann', '1:👍:ann', '1:👍:ben', '2:👍:ann']);
    const [first] = of(docs, REACTION_SUMMARIES);
    expect(first).toEqual({
      _id: JSON.stringify(['acme', '1']),
      instance_id: 'acme',
      room_id: 'r1',
      message_id: 1,
      counts: { '👍': 2, '🎉': 1 },
      latest: [
        { type: '🎉', user_id: 'ann', created_at: 't-ann-🎉' },
        { type: '👍', user_id: 'ben', created_at: 't-ben-👍' },
        { type: '👍', user_id: 'ann', created_at: 't-ann-👍' },
      ],
    });
  });

  it('keeps reactions added under a shadow ban apart, counted in no summary; their removal and their message’s deletion take them', async () => {
    const shadowed = <E extends { data: object }>(event: E): E => ({ ...event, data: { ...event.data, shadow: true } });
    const docs = await project(reactionsProjection, [
      added(1, '👍', 'ann'),
      shadowed(added(1, '👍', 'eve')),
      shadowed(added(1, '🎉', 'eve')),
      shadowed(removed(1, '🎉', 'eve')),
      shadowed(added(2, '👀', 'eve')),
      recorded('message-acme.2', 'MessageDeleted', { id: 2, room_id: 'r1', tombstone: false, deleted_at: 't9' }),
    ]);
    expect(who(docs)).toEqual(['1:👍:ann']);
    expect(of(docs, SHADOW_REACTIONS).map((d) => `${d.message_id}:${d.type}:${d.user_id}`)).toEqual(['1:👍:eve']);
    expect(of(docs, REACTION_SUMMARIES).map((d) => d.counts)).toEqual([{ '👍': 1 }]);
  });

  it(`shows the ${LATEST_REACTIONS} newest; a removal takes the reaction out of the counts and the newest, and the last one the summary`, async () => {
    const users = ['a', 'b', 'c', 'd', 'e', 'f'];
    const docs = await project(reactionsProjection, [...users.map((u) => added(1, '👍', u)), removed(1, '👍', 'f'), removed(1, '👍', 'a')]);
    const [summary] = of(docs, REACTION_SUMMARIES);
    expect(summary.counts).toEqual({ '👍': 4 });
    expect((summary.latest as { user_id: string }[]).map((r) => r.user_id)).toEqual(['e', 'd', 'c', 'b']);
    const gone = await project(reactionsProjection, [added(1, '👍', 'a'), removed(1, '👍', 'a')]);
    expect([...gone.values()]).toEqual([]);
  });

  it('forgets a deleted message’s reactions and a deleted room’s, not others', async () => {
    const docs = await project(reactionsProjection, [
      added(1, '👍', 'ann'),
      added(2, '👍', 'ann'),
      added(3, '👍', 'ann', 'r2'),
      recorded('message-acme.1', 'MessageDeleted', { id: 1, room_id: 'r1', tombstone: false, deleted_at: 't' }),
      recorded('room-acme.r2', 'RoomDeleted', { deleted_at: 't' }),
    ]);
    expect(who(docs)).toEqual(['2:👍:ann']);
    expect(of(docs, REACTION_SUMMARIES).map((d) => d.message_id)).toEqual([2]);
  });

  it('counts no reaction whose key was destroyed (it reads with an empty type)', async () => {
    const docs = await project(reactionsProjection, [added(1, '', 'ann'), added(1, '👍', 'ben'), removed(1, '', 'ann')]);
    expect(who(docs)).toEqual(['1:👍:ben']);
    expect(of(docs, REACTION_SUMMARIES)[0].counts).toEqual({ '👍': 1 });
  });

  it('folds the same events again to the same documents', async () => {
    const events = [added(1, '👍', 'ann'), added(1, '👍', 'ben'), removed(1, '👍', 'ann')];
    expect(await project(reactionsProjection, [...events, ...events])).toEqual(await project(reactionsProjection, events));
  });
});
