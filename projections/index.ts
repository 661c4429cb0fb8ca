import { auditIndexProjection } from './audit/audit-index.projection';
import { attachmentsProjection, attachmentsProjectionV2, goneAttachment } from './attachments/attachments.projection';
import { beamsDevicesProjection } from './beams/beams-devices.projection';
import { beamsPendingPublishesProjection } from './beams/beams-pending-publishes.projection';
import { beamsPendingWebhooksProjection } from './beams/beams-pending-webhooks.projection';
import { cursorsProjection } from './cursors/cursors.projection';
import { feedsProjection } from './feeds/feeds.projection';
import { idempotencyKeysProjection } from './idempotency/idempotency-keys.projection';
import { pendingDeleteJobsProjection } from './jobs/pending-delete-jobs.projection';
import { pendingErasuresProjection } from './erasures/pending-erasures.projection';
import { instancesProjection } from './instances/instances.projection';
import { messagesProjection } from './messages/messages.projection';
import { reactionsProjection } from './reactions/reactions.projection';
import { pinsProjection } from './pins/pins.projection';
import { reportsProjection } from './reports/reports.projection';
import { mutesProjection } from './mutes/mutes.projection';
import { threadsProjection } from './threads/threads.projection';
import { membershipsProjection } from './rooms/memberships.projection';
import { roomsProjection } from './rooms/rooms.projection';
import { usersProjection } from './users/users.projection';
import { namesProjection } from './search/names.projection';
import { messageSearchProjection } from './search/message-search.projection';
import { webhooksProjection } from './webhooks/webhooks.projection';
import { forgettingWipedInstances } from './instance-wipe';
import type { ProjectionDefinition } from './projection';

/** Every projection Parley runs, in no particular order (each keeps its own checkpoint). */
export const ALL_PROJECTIONS: readonly ProjectionDefinition[] = [
  instancesProjection,
  // An instance wipe removes the instance's documents (its attachments become tombstones).
  forgettingWipedInstances(usersProjection),
  forgettingWipedInstances(roomsProjection),
  forgettingWipedInstances(membershipsProjection),
  forgettingWipedInstances(cursorsProjection),
  forgettingWipedInstances(messagesProjection),
  forgettingWipedInstances(reactionsProjection),
  forgettingWipedInstances(pinsProjection),
  forgettingWipedInstances(reportsProjection),
  forgettingWipedInstances(mutesProjection),
  forgettingWipedInstances(threadsProjection),
  forgettingWipedInstances(attachmentsProjectionV2, (doc, event) => goneAttachment(doc, event.recordedAt)),
  forgettingWipedInstances(attachmentsProjection, (doc, event) => goneAttachment(doc, event.recordedAt)),
  pendingDeleteJobsProjection,
  pendingErasuresProjection,
  forgettingWipedInstances(beamsDevicesProjection),
  forgettingWipedInstances(beamsPendingPublishesProjection),
  forgettingWipedInstances(feedsProjection),
  forgettingWipedInstances(beamsPendingWebhooksProjection),
  forgettingWipedInstances(webhooksProjection),
  forgettingWipedInstances(namesProjection),
  forgettingWipedInstances(messageSearchProjection),
  // Not forgotten on a wipe: the log keeps what came before it, and so does its audit.
  auditIndexProjection,
  // Not forgotten on a wipe either: a key lives its time (IDEMPOTENCY_KEY_TTL_HOURS) whatever happens to what it guarded.
  idempotencyKeysProjection,
];
