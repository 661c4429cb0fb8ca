/**
 * Every event the log holds, as the write side declares it (each context's `domain/` folder):
 * what projections fold and what their specs may record. A field renamed there fails the
 * build here. Events are permanent, so these types describe every shape a log may hold
 * (fields added later are optional).
 */
import type { AttachmentEvent } from '../src/modules/attachments/domain/attachment.events';
import type { BeamsDeviceEvent } from '../src/modules/beams/domain/beams-device.events';
import type { BeamsPublishEvent, BeamsUserEvent } from '../src/modules/beams/domain/beams.events';
import type { CursorEvent } from '../src/modules/cursors/domain/cursor.events';
import type { FeedEvent } from '../src/modules/feeds/domain/feed.events';
import type { InstanceEvent } from '../src/modules/instances/domain/instance.events';
import type { MessageEvent, MessageIdsReserved, ReactionEvent } from '../src/modules/messages/domain/message.events';
import type { PinEvent } from '../src/modules/pins/domain/pin.events';
import type { ReportEvent } from '../src/modules/reports/domain/report.events';
import type { MuteEvent } from '../src/modules/mutes/domain/mute.events';
import type { ThreadEvent } from '../src/modules/threads/domain/thread.events';
import type { RestrictionEvent } from '../src/modules/bans/domain/restriction.events';
import type { RoleEvent, UserRoleEvent } from '../src/modules/roles/domain/role.events';
import type { RoomEvent } from '../src/modules/rooms/domain/room.events';
import type { DeleteJobEvent } from '../src/modules/scheduler/domain/delete-job.events';
import type { ErasureEvent } from '../src/modules/erasures/domain/erasure.events';
import type { UserEvent } from '../src/modules/users/domain/user.events';
import type { WebhookEvent } from '../src/modules/webhooks/domain/webhook.events';
import type { InstanceWiped } from '../src/modules/wipe/domain/instance-wipe.decider';
import type { ContentReadEvent } from '../src/modules/inspector/domain/content-read.events';
import type { InstanceImportEvent } from '../src/modules/operator/domain/instance-import.events';

export type ParleyEvent =
  | AttachmentEvent
  | BeamsDeviceEvent
  | BeamsPublishEvent
  | BeamsUserEvent
  | CursorEvent
  | FeedEvent
  | InstanceEvent
  | MessageEvent
  | MessageIdsReserved
  | ReactionEvent
  | PinEvent
  | ReportEvent
  | MuteEvent
  | ThreadEvent
  | RestrictionEvent
  | RoleEvent
  | UserRoleEvent
  | RoomEvent
  | DeleteJobEvent
  | ErasureEvent
  | UserEvent
  | WebhookEvent
  | InstanceWiped
  | ContentReadEvent
  | InstanceImportEvent;

/** The event of a type name, e.g. `EventOfType<'RoomDeleted'>`. */
export type EventOfType<T extends ParleyEvent['type']> = Extract<ParleyEvent, { readonly type: T }>;

/** Every event type, checked by the compiler: a new type left out here fails the build. */
const EVERY_TYPE: Record<ParleyEvent['type'], true> = {
  AttachmentCreated: true,
  AttachmentUploaded: true,
  AttachmentDeleted: true,
  AttachmentBlobRemoved: true,
  BeamsDeviceRegistered: true,
  BeamsDeviceTokenChanged: true,
  BeamsDeviceInterestsChanged: true,
  BeamsDeviceMetadataUpdated: true,
  BeamsDeviceUserSet: true,
  BeamsDeviceDeleted: true,
  BeamsPublishAccepted: true,
  BeamsPublishDelivered: true,
  BeamsPublishWebhookAttempted: true,
  BeamsUserDeleted: true,
  ReadCursorSet: true,
  FeedItemsPublished: true,
  FeedItemsDeleted: true,
  InstanceCreated: true,
  InstanceDisabled: true,
  InstanceEnabled: true,
  KeyCreated: true,
  KeyDisabled: true,
  TokenProviderEnabled: true,
  TokenProviderDisabled: true,
  InstanceExported: true,
  MessageSent: true,
  MessageEdited: true,
  MessageDeleted: true,
  MessageIdsReserved: true,
  MessageReactionAdded: true,
  MessageReactionRemoved: true,
  MessagePinned: true,
  MessageUnpinned: true,
  ReportFiled: true,
  ReportResolved: true,
  UserMuted: true,
  UserUnmuted: true,
  ThreadReadCursorSet: true,
  UserBanned: true,
  UserUnbanned: true,
  RoomFrozen: true,
  RoomUnfrozen: true,
  RoleCreated: true,
  RoleDeleted: true,
  RolePermissionsChanged: true,
  BuiltInRolesRestored: true,
  UserRoleAssigned: true,
  UserRoleRemoved: true,
  RoomCreated: true,
  RoomUpdated: true,
  RoomDeleted: true,
  RoomMembersAdded: true,
  RoomMembersRemoved: true,
  DeleteJobScheduled: true,
  DeleteJobCompleted: true,
  DeleteJobFailed: true,
  ErasureRequested: true,
  ErasureProgressed: true,
  ErasureCompleted: true,
  UserCreated: true,
  UserUpdated: true,
  UserDeleted: true,
  WebhookCreated: true,
  WebhookUpdated: true,
  WebhookDeactivated: true,
  WebhookActivated: true,
  WebhookReplayRequested: true,
  WebhookRedeliveryRequested: true,
  WebhookDeleted: true,
  InstanceWiped: true,
  MessageContentRead: true,
  InstanceImported: true,
};

/** Every event type's name: what projections that fold the whole log (the audit index, idempotency keys) handle. */
export const EVERY_EVENT_TYPE = Object.keys(EVERY_TYPE) as ParleyEvent['type'][];
