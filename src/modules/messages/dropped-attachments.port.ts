/**
 * What a message's edit or delete asks of attachments once it is stored and folded: the
 * attachments it dropped are gone at once, bytes and names (in the log too), rather than at the
 * blob janitor's next sweep. Implemented by the attachments module.
 */
export interface DroppedAttachments {
  /** Removes the bytes of the attachments the message `messageId` dropped and records their end (which destroys their names' key). */
  releaseDroppedBy(instanceId: string, messageId: number): Promise<void>;
}

export const DROPPED_ATTACHMENTS = Symbol('DroppedAttachments');
