import { dataKeyIds, DataKeyOf, PersonalDataRule, ShredRule } from '../../../shared/domain/personal-data';
import { parseStreamName } from '../../../shared/domain/streams';
import { incarnationAt } from '../../../shared/domain/incarnations';
import { UserCreated, UserDeleted, UserUpdated } from './user.events';

/**
 * The profile key of the incarnation `createdAt` of the user whose stream this is: the one its
 * creation named (`profileKey`), or else the one named after the incarnation (a user created
 * before profiles were sealed, updated after).
 */
const profileKey = (stream: string, createdAt: string | undefined, profileKeyId: string | undefined): DataKeyOf | null => {
  const parsed = parseStreamName(stream);
  if (!parsed || parsed.category !== 'user' || createdAt === undefined) return null;
  const owner = dataKeyIds.owner(parsed.instanceId, parsed.id, createdAt);
  return { id: profileKeyId ?? dataKeyIds.profile(parsed.instanceId, parsed.id, createdAt), owner };
};

/**
 * A user's profile (name, avatar URL, custom data) under a key of the user incarnation's own,
 * made ready before the user's creation (`ProfileKeys`). Once destroyed the user reads with an
 * empty name and no avatar or custom data (its deletion follows it in the log, so no read model
 * keeps even that).
 */
export const userCreatedPersonalData: PersonalDataRule<UserCreated> = {
  type: 'UserCreated',
  fields: ['name', 'avatar_url', 'custom_data'],
  erased: { name: '' },
  keyOf: (event, stream) => profileKey(stream, event.data.created_at, event.data.profile_key),
};

/** A change of profile under the same key: the user's delete destroys every version of the profile at once. */
export const userUpdatedPersonalData: PersonalDataRule<UserUpdated> = {
  type: 'UserUpdated',
  fields: ['name', 'avatar_url', 'custom_data'],
  erased: {},
  keyOf: (event, stream) => profileKey(stream, event.data.user_created_at, event.data.profile_key),
  // An update of a log written before profiles were sealed names no incarnation: the offline rewrite finds it in the stream.
  keyOfWritten: async (event, stream, history) =>
    profileKey(stream, await incarnationAt(history, stream, 'UserCreated', event.data.updated_at), event.data.profile_key),
};

/** A user's delete (v2, v6, the scheduler's) destroys the profile of the incarnation it deletes, never a later one's. */
export const userDeletedShredsProfile: ShredRule<UserDeleted> = {
  type: 'UserDeleted',
  async destroys(event, stream, history) {
    // A delete of a log written before profiles were sealed names no incarnation: found in the stream.
    const createdAt = event.data.user_created_at ?? (await incarnationAt(history, stream, 'UserCreated', event.data.deleted_at));
    const key = profileKey(stream, createdAt, event.data.profile_key);
    return key ? [{ ids: [key.id] }] : [];
  },
};
