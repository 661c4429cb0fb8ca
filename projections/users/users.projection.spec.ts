import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { USERS, userDocumentId, usersProjection } from './users.projection';

const stream = 'user-acme.alice';
const at = (m: number) => `2026-01-01T00:0${m}:00.000Z`;

describe('users projection', () => {
  it('creates, updates and removes the user document', async () => {
    const created = recorded(stream, 'UserCreated', { id: 'alice', name: 'Alice', custom_data: { a: 1 }, created_at: at(1) });
    const updated = recorded(stream, 'UserUpdated', { avatar_url: 'https://x/a.png', updated_at: at(2) });
    let docs = await project(usersProjection, [created, updated]);
    expect(docs.get(`${USERS}|${userDocumentId('acme', 'alice')}`)).toEqual({
      _id: userDocumentId('acme', 'alice'),
      instance_id: 'acme',
      id: 'alice',
      name: 'Alice',
      avatar_url: 'https://x/a.png',
      custom_data: { a: 1 },
      created_at: at(1),
      updated_at: at(2),
    });
    docs = await project(usersProjection, [created, updated, recorded(stream, 'UserDeleted', { deleted_at: at(3) })]);
    expect(docs.size).toBe(0);
  });

  it('keeps users of different instances apart', async () => {
    const docs = await project(usersProjection, [
      recorded('user-one.u', 'UserCreated', { id: 'u', name: 'one', created_at: at(1) }),
      recorded('user-two.u', 'UserCreated', { id: 'u', name: 'two', created_at: at(1) }),
    ]);
    expect([...docs.values()].map((d) => [d.instance_id, d.name])).toEqual([
      ['one', 'one'],
      ['two', 'two'],
    ]);
  });

  it('ignores an update of a user it never saw created', async () => {
    expect((await project(usersProjection, [recorded(stream, 'UserUpdated', { name: 'x', updated_at: at(1) })])).size).toBe(0);
  });
});
