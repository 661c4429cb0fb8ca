import { Actor } from '../../shared/domain/event';
import { MessagePart } from './domain/message-parts';
import { ThreadOfReply } from './domain/message.decider';

/** A message sent to a room (or a thread reply, src/modules/threads/reply-to-message): the one send sequence, SendMessageHandler. */
export class SendMessageCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly userId: string,
    readonly parts: MessagePart[],
    readonly actor: Actor,
    readonly su: boolean,
    /** A thread reply (src/modules/threads/reply-to-message): its parent, checked before. */
    readonly thread?: ThreadOfReply,
    /** What the answer waits for besides the messages read model (a reply: the threads one). */
    readonly awaitAlso: readonly string[] = [],
    /** Sent under a shadow ban (as the access check found): shown to its sender alone. */
    readonly shadow = false,
  ) {}
}
