import { PersonalDataRuleOf, PreparedKeysRuleOf, ShredRuleOf } from '../shared/domain/personal-data';
import { messageDeletedShreds, messageEditedPersonalData, messageEditedShredsPrevious, messageIdsReservedPreparesKeys, messageSentPersonalData, roomDeletedShredsMessages } from '../modules/messages/domain/message.personal-data';
import { instanceWipedShreds } from '../modules/wipe/domain/instance-wipe.personal-data';
import { roomCreatedPersonalData, roomDeletedShredsRoom, roomUpdatedPersonalData } from '../modules/rooms/domain/room.personal-data';
import { attachmentBlobRemovedShreds, attachmentCreatedPersonalData, attachmentDeletedShreds } from '../modules/attachments/domain/attachment.personal-data';
import { userCreatedPersonalData, userDeletedShredsProfile, userUpdatedPersonalData } from '../modules/users/domain/user.personal-data';
import { erasureCompletedShreds, erasureProgressShreds } from '../modules/erasures/domain/erasure.personal-data';
import type { ParleyEvent } from '../../projections/events';

/**
 * Every context's personal-data rules (beside its events): which fields are sealed in the log
 * under which data key, and what each delete destroys.
 */
export const PERSONAL_DATA_RULES: {
  readonly sealing: readonly PersonalDataRuleOf<ParleyEvent>[];
  readonly preparing: readonly PreparedKeysRuleOf<ParleyEvent>[];
  readonly shredding: readonly ShredRuleOf<ParleyEvent>[];
} = {
  sealing: [
    messageSentPersonalData,
    messageEditedPersonalData,
    roomCreatedPersonalData,
    roomUpdatedPersonalData,
    attachmentCreatedPersonalData,
    userCreatedPersonalData,
    userUpdatedPersonalData,
  ],
  preparing: [
    messageIdsReservedPreparesKeys,
  ],
  shredding: [
    messageDeletedShreds,
    messageEditedShredsPrevious,
    roomDeletedShredsMessages,
    instanceWipedShreds,
    roomDeletedShredsRoom,
    attachmentDeletedShreds,
    attachmentBlobRemovedShreds,
    userDeletedShredsProfile,
    erasureProgressShreds,
    erasureCompletedShreds,
  ],
};
