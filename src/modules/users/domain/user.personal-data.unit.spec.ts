import { dataKeyIds } from '../../../shared/domain/personal-data';
import { messageSentPersonalData } from '../../messages/domain/message.personal-data';
import { UserCreated, UserDeleted, UserUpdated } from './user.events';
import { userCreatedPersonalData, userDeletedShredsProfile, userUpdatedPersonalData } from './user.personal-data';

const t1 = '2026-01-01T00:00:00.000Z';
const t2 = '2026-02-01T00:00:00.000Z';
const BLOCK_KEY = 'acme/profile/b1/7';
/** `profileKey` null: a creation of a log written before profiles were sealed. */
const created = (createdAt = t1, profileKey: string | null = BLOCK_KEY): UserCreated => ({
  type: 'UserCreated',
  data: { id: 'al.ice/1', name: 'Alice', custom_data: { a: 1 }, created_at: createdAt, profile_key: profileKey ?? undefined },
});
const updated = (userCreatedAt?: string, profileKey?: string): UserUpdated => ({ type: 'UserUpdated', data: { name: 'Al', updated_at: t2, user_created_at: userCreatedAt, profile_key: profileKey } });
const deleted = (userCreatedAt?: string, profileKey?: string): UserDeleted => ({ type: 'UserDeleted', data: { deleted_at: t2, user_created_at: userCreatedAt, profile_key: profileKey } });
const STREAM = 'user-acme.al.ice/1';
const noHistory = { readStream: async () => [] };
const OWNER = 'acme/al.ice%2F1@2026-01-01T00:00:00.000Z';
const PROFILE = `${OWNER}/profile`;

describe('user personal data', () => {
  it("seals a user's name, avatar URL and custom data under the profile key its creation names, owned by the incarnation", () => {
    expect(userCreatedPersonalData.fields).toEqual(['name', 'avatar_url', 'custom_data']);
    expect(userCreatedPersonalData.keyOf(created(), STREAM)).toEqual({ id: BLOCK_KEY, owner: OWNER });
    // The owner is the one the user's messages name.
    const sent = messageSentPersonalData.keyOf(
      { type: 'MessageSent', data: { id: 1, user_id: 'al.ice/1', user_created_at: t1, parts: [], room_created_at: 'r', created_at: 'c' } },
      'messages-acme.r',
    )!;
    expect(sent.owner).toBe(OWNER);
    // The profile keys' blocks are under the instance: the wipe destroys them with everything else.
    expect(dataKeyIds.profileBlock('acme', 'b1').startsWith(dataKeyIds.instance('acme'))).toBe(true);
  });

  it('seals an update under the same key; one of a user created before sealing under a key named after the incarnation; one of a log written before sealing stays as written', () => {
    expect(userUpdatedPersonalData.fields).toEqual(userCreatedPersonalData.fields);
    expect(userUpdatedPersonalData.keyOf(updated(t1, BLOCK_KEY), STREAM)).toEqual(userCreatedPersonalData.keyOf(created(), STREAM));
    expect(userUpdatedPersonalData.keyOf(updated(t1), STREAM)).toEqual({ id: PROFILE, owner: OWNER });
    expect(userUpdatedPersonalData.keyOf(updated(), STREAM)).toBeNull();
  });

  it('gives a user created again with the same id a key of its own', () => {
    expect(userCreatedPersonalData.keyOf(created(t2, 'acme/profile/b1/8'), STREAM)!.id).not.toBe(userCreatedPersonalData.keyOf(created(t1), STREAM)!.id);
    expect(userCreatedPersonalData.keyOf(created(t2, null), STREAM)!.id).not.toBe(userCreatedPersonalData.keyOf(created(t1, null), STREAM)!.id);
  });

  it('destroys the profile of the incarnation deleted, and nothing of a later one', async () => {
    expect(await userDeletedShredsProfile.destroys(deleted(t1, BLOCK_KEY), STREAM, noHistory)).toEqual([{ ids: [BLOCK_KEY] }]);
    expect(await userDeletedShredsProfile.destroys(deleted(t1), STREAM, noHistory)).toEqual([{ ids: [PROFILE] }]);
    expect(await userDeletedShredsProfile.destroys(deleted(), STREAM, noHistory)).toEqual([]);
  });

  it("places an update and a delete of a log written before sealing by the user's stream: the incarnation created before them", async () => {
    const history = { readStream: async () => [created(t1, null), updated(), deleted()] };
    expect(await userUpdatedPersonalData.keyOfWritten!(updated(), STREAM, history)).toEqual({ id: PROFILE, owner: OWNER });
    expect(await userDeletedShredsProfile.destroys(deleted(), STREAM, history)).toEqual([{ ids: [PROFILE] }]);
  });

  it('reads an erased profile as a user with an empty name and no avatar or custom data', () => {
    expect(userCreatedPersonalData.erased).toEqual({ name: '' });
    expect(userUpdatedPersonalData.erased).toEqual({});
  });
});
