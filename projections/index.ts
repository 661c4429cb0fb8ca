import { attachmentsProjection } from './attachments/attachments.projection';
import { cursorsProjection } from './cursors/cursors.projection';
import { pendingDeleteJobsProjection } from './jobs/pending-delete-jobs.projection';
import { instancesProjection } from './instances/instances.projection';
import { messagesProjection } from './messages/messages.projection';
import { membershipsProjection } from './rooms/memberships.projection';
import { roomsProjection } from './rooms/rooms.projection';
import { usersProjection } from './users/users.projection';
import type { ProjectionDefinition } from './projection';

/** Every projection Parley runs, in no particular order (each keeps its own checkpoint). */
export const ALL_PROJECTIONS: readonly ProjectionDefinition[] = [
  instancesProjection,
  usersProjection,
  roomsProjection,
  membershipsProjection,
  cursorsProjection,
  messagesProjection,
  attachmentsProjection,
  pendingDeleteJobsProjection,
];
