import { messageSentPersonalData } from '../../messages/domain/message.personal-data';
import { UserCreated, UserDeleted, UserUpdated } from './user.events';
import { userCreatedPersonalData, userDeletedShredsProfile, userUpdatedPersonalData } from './user.personal-data';

const t1 = '2026-01-01T00:00:00.000Z';
const t2 = '2026-02-01T00:00:00.000Z';
const created = (createdAt = t1): UserCreated => ({ type: 'UserCreated', data: { id: 'al.ice/1', name: 'Alice', custom_data: { a: 1 }, created_at: createdAt } });
const updated = (userCreatedAt?: string): UserUpdated => ({ type: 'UserUpdated', data: { name: 'Al', updated_at: t2, user_created_at: userCreatedAt } });
const deleted = (userCreatedAt?: string): UserDeleted => ({ type: 'UserDeleted', data: { deleted_at: t2, user_created_at: userCreatedAt } });
const STREAM = 'user-acme.al.ice/1';
const noHistory = { readStream: async () => [] };
const OWNER = 'acme/al.ice%2F1@2026-01-01T00:00:00.000Z';
const PROFILE = `${OWNER}/profile`;

describe('user personal data', () => {
  it("seals a user's name, avatar URL and custom data under the profile key of the incarnation, in its owner's subtree", () => {
    expect(userCreatedPersonalData.fields).toEqual(['name', 'avatar_url', 'custom_data']);
    const key = userCreatedPersonalData.keyOf(created(), STREAM)!;
    expect(key.owner).toBe(OWNER);
    expect(key.id).toBe(PROFILE);
    // The owner of the user's messages is the same incarnation: an erasure destroys the subtree `owner + '/'`.
    const sent = messageSentPersonalData.keyOf(
      { type: 'MessageSent', data: { id: 1, user_id: 'al.ice/1', user_created_at: t1, parts: [], room_created_at: 'r', created_at: 'c' } },
      'messages-acme.r',
    )!;
    expect(key.id.startsWith(`${sent.owner}/`)).toBe(true);
  });

  it("seals an update under the same incarnation's profile key; one of a log written before sealing names no incarnation and stays as written", () => {
    expect(userUpdatedPersonalData.fields).toEqual(userCreatedPersonalData.fields);
    expect(userUpdatedPersonalData.keyOf(updated(t1), STREAM)).toEqual(userCreatedPersonalData.keyOf(created(), STREAM));
    expect(userUpdatedPersonalData.keyOf(updated(), STREAM)).toBeNull();
  });

  it('gives a user created again with the same id a key of its own', () => {
    expect(userCreatedPersonalData.keyOf(created(t2), STREAM)!.id).not.toBe(userCreatedPersonalData.keyOf(created(t1), STREAM)!.id);
  });

  it("destroys the profile of the incarnation deleted, and nothing of a later one's", async () => {
    expect(await userDeletedShredsProfile.destroys(deleted(t1), STREAM, noHistory)).toEqual([{ ids: [PROFILE] }]);
    expect(await userDeletedShredsProfile.destroys(deleted(), STREAM, noHistory)).toEqual([]);
    expect(userCreatedPersonalData.keyOf(created(t2), STREAM)!.id).not.toBe(PROFILE);
  });

  it('reads an erased profile as a user with an empty name and no avatar or custom data', () => {
    expect(userCreatedPersonalData.erased).toEqual({ name: '' });
    expect(userUpdatedPersonalData.erased).toEqual({});
  });
});
