import { PersonalDataRuleOf, PreparedKeysRuleOf, ShredRuleOf } from '../shared/domain/personal-data';
import { messageDeletedShreds, messageEditedPersonalData, messageEditedShredsPrevious, messageIdsReservedPreparesKeys, messageSentPersonalData, roomDeletedShredsMessages } from '../modules/messages/domain/message.personal-data';
import { instanceWipedShreds } from '../modules/wipe/domain/instance-wipe.personal-data';
import { beamsDeviceDeletedShreds, beamsDeviceRegisteredPersonalData, beamsDeviceTokenChangedPersonalData, beamsPublishAcceptedPersonalData, beamsPublishDeliveredShreds, beamsUserDeletedShreds } from '../modules/beams/domain/beams.personal-data';
import { feedItemsDeletedShreds, feedItemsPublishedPersonalData } from '../modules/feeds/domain/feed.personal-data';
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
    beamsPublishAcceptedPersonalData,
    beamsDeviceRegisteredPersonalData,
    beamsDeviceTokenChangedPersonalData,
    feedItemsPublishedPersonalData,
  ],
  preparing: [messageIdsReservedPreparesKeys],
  shredding: [
    messageDeletedShreds,
    messageEditedShredsPrevious,
    roomDeletedShredsMessages,
    instanceWipedShreds,
    beamsPublishDeliveredShreds,
    beamsDeviceDeletedShreds,
    beamsUserDeletedShreds,
    feedItemsDeletedShreds,
  ],
};
