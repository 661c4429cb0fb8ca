import { dataKeyIds, PersonalDataRule, ShredRule } from '../../../shared/domain/personal-data';
import { parseStreamName } from '../../../shared/domain/streams';
import type { RoomDeleted } from '../../rooms/domain/room.events';
import { UserBanned, UserUnbanned } from './restriction.events';

const segment = (part: string) => encodeURIComponent(part);

/** Every ban key of a restrictions stream (`room.<room>` or `instance`): the subtree its deletes destroy. */
const bansOf = (instanceId: string, scope: string) => `${segment(instanceId)}/ban/${segment(scope)}/`;
/** Every ban key of one user incarnation in that scope. */
const bansOfUser = (instanceId: string, scope: string, userId: string, userCreatedAt: string) =>
  `${bansOf(instanceId, scope)}${segment(userId)}@${segment(userCreatedAt)}/`;

const restrictionsOf = (stream: string) => {
  const parsed = parseStreamName(stream);
  return parsed && parsed.category === 'restrictions' ? parsed : null;
};

/**
 * A ban's reason (what a moderator wrote about a person) under a key of its own, owned by the
 * banned user's incarnation: their erasure destroys it, and so do lifting the ban, the room's
 * delete (for a room ban) and the wipe.
 */
export const userBannedPersonalData: PersonalDataRule<UserBanned> = {
  type: 'UserBanned',
  fields: ['reason'],
  erased: { reason: '' },
  keyOf(event, stream) {
    const parsed = restrictionsOf(stream);
    if (!parsed) return null;
    const { user_id, user_created_at, banned_at } = event.data;
    return {
      id: `${bansOfUser(parsed.instanceId, parsed.id, user_id, user_created_at)}${segment(banned_at)}`,
      owner: dataKeyIds.owner(parsed.instanceId, user_id, user_created_at),
    };
  },
};

/** A lifted ban's reasons (every ban of that user in that scope up to now) are destroyed: the log keeps that there was a ban, not why. */
export const userUnbannedShredsReasons: ShredRule<UserUnbanned> = {
  type: 'UserUnbanned',
  destroys(event, stream) {
    const parsed = restrictionsOf(stream);
    if (!parsed) return [];
    const { user_id, user_created_at } = event.data;
    return [{ prefix: bansOfUser(parsed.instanceId, parsed.id, user_id, user_created_at) }];
  },
};

/** A deleted room's bans' reasons go with it (bans made after the delete, of a room created again, stay). */
export const roomDeletedShredsBans: ShredRule<RoomDeleted> = {
  type: 'RoomDeleted',
  destroys(event, stream) {
    const parsed = parseStreamName(stream);
    if (!parsed || parsed.category !== 'room') return [];
    return [{ prefix: bansOf(parsed.instanceId, `room.${parsed.id}`) }];
  },
};
