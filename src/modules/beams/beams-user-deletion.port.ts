import type { EventMetadata } from '../../shared/domain/event';

/**
 * Beams' `deleteUser` as another context asks for it (a user erasure): the user's devices
 * forgotten, their push addresses and the undelivered publishes to the user destroyed, answered
 * once the device registry has folded it. Implemented by `DeleteBeamsUser`.
 */
export interface BeamsUserDeletion {
  /** Deletes the Beams user, recorded with `metadata` (who asked, when, and why). */
  deleteRecording(instanceId: string, userId: string, metadata: EventMetadata): Promise<void>;
}

export const BEAMS_USER_DELETION = Symbol('BeamsUserDeletion');
