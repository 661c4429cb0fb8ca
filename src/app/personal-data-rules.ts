import { PersonalDataOptIn, PersonalDataRuleOf, PreparedKeysRuleOf, ShredRuleOf, withOptIns } from '../shared/domain/personal-data';
import type { ParleyConfig } from '../config/config';
import { messageDeletedShreds, messageEditedPersonalData, messageEditedShredsPrevious, messageIdsReservedPreparesKeys, messageReactionAddedPersonalData, messageReactionRemovedPersonalData, messageSentPersonalData, roomDeletedShredsMessages } from '../modules/messages/domain/message.personal-data';
import { instanceWipedShreds } from '../modules/wipe/domain/instance-wipe.personal-data';
import { roomCreatedPersonalData, roomDeletedShredsRoom, roomUpdatedPersonalData } from '../modules/rooms/domain/room.personal-data';
import { attachmentBlobRemovedShreds, attachmentCreatedPersonalData, attachmentDeletedShreds } from '../modules/attachments/domain/attachment.personal-data';
import { userCreatedPersonalData, userDeletedShredsProfile, userUpdatedPersonalData } from '../modules/users/domain/user.personal-data';
import { erasureCompletedShreds, erasureProgressShreds } from '../modules/erasures/domain/erasure.personal-data';
import { beamsDeviceDeletedShreds, beamsDeviceRegisteredPersonalData, beamsDeviceTokenChangedPersonalData, beamsPublishAcceptedPersonalData, beamsPublishDeliveredShreds, beamsUserDeletedShreds } from '../modules/beams/domain/beams.personal-data';
import { feedItemsDeletedShreds, feedItemsPublishedPersonalData } from '../modules/feeds/domain/feed.personal-data';
import { reportFiledPersonalData, reportResolvedPersonalData } from '../modules/reports/domain/report.personal-data';
import { roomDeletedShredsBans, userBannedPersonalData, userUnbannedShredsReasons } from '../modules/bans/domain/restriction.personal-data';
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
    messageReactionAddedPersonalData,
    messageReactionRemovedPersonalData,
    roomCreatedPersonalData,
    roomUpdatedPersonalData,
    attachmentCreatedPersonalData,
    userCreatedPersonalData,
    userUpdatedPersonalData,
    beamsPublishAcceptedPersonalData,
    beamsDeviceRegisteredPersonalData,
    beamsDeviceTokenChangedPersonalData,
    feedItemsPublishedPersonalData,
    reportFiledPersonalData,
    reportResolvedPersonalData,
    userBannedPersonalData,
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
    beamsPublishDeliveredShreds,
    beamsDeviceDeletedShreds,
    beamsUserDeletedShreds,
    feedItemsDeletedShreds,
    userUnbannedShredsReasons,
    roomDeletedShredsBans,
  ],
};

/**
 * The rules as this deployment applies them (the server, and the offline rewrite of a data
 * directory): what is sealed only on the operator's request (FEEDS_SEAL_ITEMS) as configured.
 */
export function personalDataRulesFor(config: Pick<ParleyConfig, 'feedsSealItems'>): typeof PERSONAL_DATA_RULES {
  const optedIn = new Set<PersonalDataOptIn>(config.feedsSealItems ? ['feed_items'] : []);
  return { ...PERSONAL_DATA_RULES, sealing: withOptIns(PERSONAL_DATA_RULES.sealing, optedIn) };
}
