import { BEAMS_USER_DELETION, BeamsUserDeletion } from '../../beams/beams-user-deletion.port';
import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { SEALED_FIELD } from '../../../shared/application/operations/sealing-event-store';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { DomainError } from '../../../shared/domain/errors';
import { BlobJanitor } from '../../attachments/blob-janitor';
import { EventMetadata, LogPosition, RecordedEvent } from '../../../shared/domain/event';
import { parseStreamName } from '../../../shared/domain/streams';
import { EventStore, STORED_EVENT_LOG } from '../../../shared/ports/event-store.port';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../../projections/projection';
import { ATTACHMENTS } from '../../../../projections/attachments/attachments.projection';
import { BEAMS_DEVICES } from '../../../../projections/beams/beams-devices.projection';
import { READ_CURSORS } from '../../../../projections/cursors/cursors.projection';
import { pendingErasuresProjection } from '../../../../projections/erasures/pending-erasures.projection';
import { messageDecider, messageStream, SentMessage, sentBy, sentMessageOf } from '../../messages/domain/message.decider';
import { MessageEdited, MessageSent } from '../../messages/domain/message.events';
import { AttachmentCreated } from '../../attachments/domain/attachment.events';
import { CHANGE_READS } from '../../messages/message-changes';
import { THREAD_READS } from '../../threads/threads.read-model';
import { REACTION_READS } from '../../messages/reactions.read-model';
import { ReactionDocument, REACTIONS, SHADOW_REACTIONS } from '../../../../projections/reactions/reactions.projection';
import { SentMessages } from '../../messages/sent-messages';
import { roomDecider, roomStream } from '../../rooms/domain/room.decider';
import { userDecider, userStream } from '../../users/domain/user.decider';
import { erasureDecider, ErasureState, erasureStream } from '../domain/erasure.decider';
import { ErasureCounts, ErasureStep } from '../domain/erasure.events';

/** Events of the log read per page while looking for the user's messages (one progress checkpoint per page). */
const SCAN_PAGE = 500;
/** Pages of other users' events scanned between two checkpoints (a resumed run scans at most these again). */
const QUIET_PAGES_PER_CHECKPOINT = 20;
/** Passes of the blob janitor an erasure runs before it leaves the removal of its uploads' bytes to a later run. */
const BLOB_PASSES = 3;
/** Who an erasure's steps are recorded under when its request named no one (it always does). */
const ERASURE_ACTOR = { key_id: 'erasure' };

type Data = Record<string, unknown>;

/** An event that carries personal fields in plain text: written before sealing, no destroy reaches it. */
const isPlaintext = (event: { data: unknown }, fields: readonly string[]): boolean => {
  const data = event.data as Data | null;
  return data !== null && typeof data === 'object' && data[SEALED_FIELD] === undefined && fields.some((field) => data[field] !== undefined);
};

/** What an attachment's creation holds of its uploader's: its name, custom data and file name. */
const ATTACHMENT_FIELDS = ['name', 'custom_data', 'file_name'];
/** What a user's profile events hold. */
const PROFILE_FIELDS = ['name', 'avatar_url', 'custom_data'];

const sentOf = (data: MessageSent['data']): SentMessage => sentMessageOf(data);

/**
 * Erases one user incarnation, in steps recorded on the erasure's stream so that a run killed
 * at any point resumes where it stood (every step is idempotent):
 * 1. `counted`: what the user holds (cursors, uploads, Beams devices, plaintext profile events);
 * 2. `user_erased`: the user's reactions are removed, the Beams user and the user are deleted (the user's deletion takes its
 *    profile, memberships, cursors and the uploads no message carries; its token acts for no one
 *    after it, so the user writes nothing more), and the step's event destroys every key the
 *    incarnation owns;
 * 3. `messages`: the log is scanned, page by page, for the messages the incarnation sent (and
 *    its uploads, only to count those named in plain text); a page's messages are named in a
 *    checkpoint that destroys the keys of all their versions in one write, then each becomes a
 *    tombstone (a delete: the attachments it carried go), in its room, in its place;
 * 4. once the bytes of the uploads that went are removed, completed with the counts, destroying
 *    the incarnation's keys once more (a message keyed at a send that raced the erasure).
 */
@Injectable()
export class UserErasure {
  constructor(
    private readonly pipeline: CommandPipeline,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(STORED_EVENT_LOG) private readonly storedLog: EventStore,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    private readonly sentMessages: SentMessages,
    private readonly blobJanitor: BlobJanitor,
    @Inject(BEAMS_USER_DELETION) private readonly beamsUsers: BeamsUserDeletion,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async run(instanceId: string, erasureId: string): Promise<void> {
    const stream = erasureStream(instanceId, erasureId);
    let { state } = await this.pipeline.load(stream, erasureDecider);
    if (state.status === null || state.status === 'completed') return;
    const metadata = (): EventMetadata => ({
      instance_id: instanceId,
      actor: state.requestedBy ?? ERASURE_ACTOR,
      occurred_at: this.now(),
      erasure_id: erasureId,
    });
    const record = async (step: ErasureStep, scannedTo: LogPosition | null, counts: ErasureCounts, erasing?: number[]) => {
      // The checkpoint is in the log before the next step begins: that is all a resumed run reads.
      ({ state } = await this.pipeline.run(stream, erasureDecider, { type: 'RecordProgress', step, scannedTo, counts, erasing, now: this.now() }, metadata(), {
        awaitProjections: [],
      }));
    };

    if (state.step === null) await record('counted', null, await this.count(instanceId, state));
    if (state.step === 'counted') {
      await this.eraseUser(instanceId, state, metadata());
      await record('user_erased', null, state.counts);
    }
    let counts = state.counts;
    let after = state.scannedTo;
    let quietPages = 0;
    for (;;) {
      const page = await this.storedLog.readAll({
        after,
        maxCount: SCAN_PAGE,
        filter: {
          eventTypes: ['MessageSent', 'MessageEdited', 'AttachmentCreated'],
          streamPrefixes: [`messages-${instanceId}.`, `message-${instanceId}.`, `attachment-${instanceId}.`],
        },
      });
      if (page.length === 0) break;
      // The page's messages are named (their keys destroyed in one write) before they become tombstones; a resumed run reads the page again.
      const pageStart = after;
      const found = await this.eraseMessages(instanceId, state, page, counts, metadata(), (erasing) => record('messages', pageStart, counts, erasing));
      after = page[page.length - 1].position;
      // A checkpoint per page that erased or counted something, and every few pages of others' events.
      if (found !== counts || ++quietPages === QUIET_PAGES_PER_CHECKPOINT) {
        counts = found;
        quietPages = 0;
        await record('messages', after, counts);
      }
    }
    await this.uploadsBytesRemoved(instanceId, state.userId!);
    await this.pipeline.run(
      stream,
      erasureDecider,
      { type: 'CompleteErasure', counts, now: this.now() },
      metadata(),
      // Answered once it left the work list, so the next sweep does not resume it again.
      { awaitProjections: [checkpointName(pendingErasuresProjection)] },
    );
  }

  /** What the incarnation holds before anything goes (counted once: a resumed run keeps these). */
  private async count(instanceId: string, erasure: ErasureState): Promise<ErasureCounts> {
    const userId = erasure.userId!;
    const user = (await this.pipeline.load(userStream(instanceId, userId), userDecider)).state;
    const current = user.exists && user.createdAt === erasure.userCreatedAt;
    const mine = { instance_id: instanceId, user_id: userId };
    return {
      user: current ? 1 : 0,
      messages: 0,
      attachments: current ? await this.readModels.count(ATTACHMENTS, { ...mine, deleted: false }) : 0,
      cursors: current ? await this.readModels.count(READ_CURSORS, mine) : 0,
      beams_devices: await this.readModels.count(BEAMS_DEVICES, mine),
      unshreddable_plaintext_events: await this.plaintextProfileEvents(instanceId, erasure),
    };
  }

  /** The incarnation's profile events stored in plain text (before profiles were sealed). */
  private async plaintextProfileEvents(instanceId: string, erasure: ErasureState): Promise<number> {
    const events = await this.storedLog.readStream(userStream(instanceId, erasure.userId!));
    let inIncarnation = false;
    let plaintext = 0;
    for (const event of events) {
      if (event.type === 'UserCreated') inIncarnation = (event.data as Data).created_at === erasure.userCreatedAt;
      else if (event.type === 'UserDeleted') inIncarnation = false;
      if (inIncarnation && (event.type === 'UserCreated' || event.type === 'UserUpdated') && isPlaintext(event, PROFILE_FIELDS)) plaintext++;
    }
    return plaintext;
  }

  /** The Beams user and the user itself (this incarnation only: a user created again with the id is another person). */
  private async eraseUser(instanceId: string, erasure: ErasureState, metadata: EventMetadata): Promise<void> {
    const userId = erasure.userId!;
    await this.removeReactions(instanceId, erasure, metadata);
    // The Beams user API's delete (DeleteBeamsUser): the devices are forgotten once the registry folded it.
    await this.beamsUsers.deleteRecording(instanceId, userId, metadata);
    await this.ignoringGone(
      this.pipeline.run(userStream(instanceId, userId), userDecider, { type: 'DeleteUser', id: userId, now: this.now(), incarnation: erasure.userCreatedAt! }, metadata),
    );
  }

  /**
   * Every reaction of the incarnation is removed, as its own removal would: before the step that
   * destroys its keys, since a reaction whose type reads as erased can no longer be named. The
   * reactions read model lists them (by message id, a page at a time); a message deleted since
   * took its reactions with it.
   */
  private async removeReactions(instanceId: string, erasure: ErasureState, metadata: EventMetadata): Promise<void> {
    const reactor = { userId: erasure.userId!, userCreatedAt: erasure.userCreatedAt! };
    // Everyone's reactions, then those added under a shadow ban (kept apart, SHADOW_REACTIONS).
    for (const collection of [REACTIONS, SHADOW_REACTIONS]) {
      for (;;) {
        // Removed reactions leave the read model before the next read: each pass reads what is left.
        const page = await this.readModels.find<ReactionDocument>(collection, {
          where: { instance_id: instanceId, user_id: reactor.userId, user_created_at: reactor.userCreatedAt },
          limit: SCAN_PAGE,
        });
        let newest: LogPosition | null = null;
        for (const reaction of page) {
          const room = await this.pipeline.load(roomStream(instanceId, reaction.room_id), roomDecider);
          const sent = room.state.exists ? await this.sentMessages.find(instanceId, reaction.room_id, reaction.message_id) : null;
          if (!sent) continue;
          const outcome = await this.ignoringGone(
            this.pipeline.run(
              messageStream(instanceId, reaction.message_id),
              messageDecider,
              {
                type: 'RemoveReaction',
                reaction: reaction.type,
                reactor,
                id: reaction.message_id,
                roomId: reaction.room_id,
                sent,
                roomCreatedAt: room.state.createdAt!,
                actor: { userCreatedAt: null, su: true },
                now: this.now(),
              },
              metadata,
              { awaitProjections: [] },
            ),
          );
          const position = outcome?.position ?? null;
          if (position !== null && (newest === null || position > newest)) newest = position;
        }
        // Nothing removed: what is left (if anything) went with its message or room, whose projection takes it.
        if (newest === null) break;
        await this.readYourWrites.waitFor(newest, REACTION_READS);
      }
    }
  }

  /**
   * One page of the log: the incarnation's messages become tombstones, and its plaintext
   * sends, edits and uploads' names are counted. Answered once the read models show the tombstones.
   */
  private async eraseMessages(
    instanceId: string,
    erasure: ErasureState,
    page: readonly RecordedEvent[],
    counts: ErasureCounts,
    metadata: EventMetadata,
    beforeTombstones: (messageIds: number[]) => Promise<void>,
  ): Promise<ErasureCounts> {
    const rooms = new Map<string, Promise<string | null>>();
    const roomCreatedAt = (roomId: string) => {
      let known = rooms.get(roomId);
      if (!known) {
        known = this.pipeline.load(roomStream(instanceId, roomId), roomDecider).then(({ state }) => (state.exists ? (state.createdAt ?? null) : null));
        rooms.set(roomId, known);
      }
      return known;
    };
    const mine = (sent: SentMessage) => sentBy(sent, erasure.userId!, erasure.userCreatedAt);
    let plaintext = 0;
    const doomed: { roomId: string; data: MessageSent['data']; roomCreatedAt: string }[] = [];
    for (const event of page) {
      const stream = parseStreamName(event.streamName);
      if (!stream) continue;
      if (event.type === 'MessageSent' && stream.category === 'messages') {
        const data = event.data as MessageSent['data'];
        if (!mine(sentOf(data))) continue;
        if (isPlaintext(event, ['parts'])) plaintext++;
        // A message of a room since deleted went with it.
        const room = await roomCreatedAt(stream.id);
        if (room !== null && room === data.room_created_at) doomed.push({ roomId: stream.id, data, roomCreatedAt: room });
      } else if (event.type === 'AttachmentCreated' && isPlaintext(event, ATTACHMENT_FIELDS)) {
        const data = event.data as AttachmentCreated['data'];
        if (data.user_id === erasure.userId && data.created_at >= erasure.userCreatedAt!) plaintext++;
      } else if (event.type === 'MessageEdited' && isPlaintext(event, ['parts'])) {
        // Only edits from before sealing need their sender: a sealed edit goes with its message's keys.
        const data = event.data as MessageEdited['data'];
        const roomId = data.room_id ?? (stream.category === 'messages' ? stream.id : null);
        const sent = roomId === null ? null : await this.sentMessages.find(instanceId, roomId, data.id);
        if (sent && mine(sent)) plaintext++;
      }
    }
    if (doomed.length) await beforeTombstones(doomed.map((d) => d.data.id));
    const deletes = doomed.map((d) => this.tombstone(instanceId, d.roomId, d.data, d.roomCreatedAt, metadata));
    const positions = (await Promise.all(deletes)).filter((p): p is LogPosition => p !== null);
    const newest = positions.reduce<LogPosition | null>((a, b) => (a === null || b > a ? b : a), null);
    // Replies among them: their threads' summaries too.
    if (newest !== null) await this.readYourWrites.waitFor(newest, [...CHANGE_READS, ...THREAD_READS]);
    // The same counts when the page held nothing of the user's.
    if (positions.length === 0 && plaintext === 0) return counts;
    return { ...counts, messages: counts.messages + positions.length, unshreddable_plaintext_events: counts.unshreddable_plaintext_events + plaintext };
  }

  /**
   * Where this erasure's tombstone of the message is: appended now, or by an earlier run of the
   * same erasure that stopped before its checkpoint (counted once all the same). Null for a
   * message that was deleted otherwise (before the erasure, or with its room).
   */
  private async tombstoneOf(instanceId: string, erasureId: string, messageId: number, appended: LogPosition | null | undefined): Promise<LogPosition | null> {
    if (appended) return appended;
    const [last] = await this.pipeline.readStream(messageStream(instanceId, messageId), { direction: 'backwards', maxCount: 1 });
    return last?.type === 'MessageDeleted' && last.metadata.erasure_id === erasureId ? last.position : null;
  }

  /**
   * Deletes the message as the v2 route does (a tombstone keeps its place in the room), as su.
   * A message already deleted is left: null, unless this erasure deleted it in an earlier run.
   */
  private async tombstone(instanceId: string, roomId: string, data: MessageSent['data'], roomCreatedAt: string, metadata: EventMetadata): Promise<LogPosition | null> {
    const outcome = await this.ignoringGone(
      this.pipeline.run(
        messageStream(instanceId, data.id),
        messageDecider,
        {
          type: 'DeleteMessage',
          tombstone: true,
          id: data.id,
          roomId,
          sent: sentOf(data),
          roomCreatedAt,
          actor: { userCreatedAt: null, su: true },
          now: this.now(),
        },
        metadata,
        // One wait for the whole page, after it.
        { awaitProjections: [] },
      ),
    );
    return this.tombstoneOf(instanceId, String(metadata.erasure_id), data.id, outcome?.position);
  }

  /**
   * The bytes of the user's uploads that went (with the user, or with the messages that carried
   * them) are removed by the blob janitor: a pass run now rather than on its timer, and one more
   * for tombstones a pass already running had not read yet. Bytes that stay (a failing blob
   * store) leave the erasure to be resumed by a later sweep.
   */
  private async uploadsBytesRemoved(instanceId: string, userId: string): Promise<void> {
    const gone = { instance_id: instanceId, user_id: userId, deleted: true };
    for (let pass = 0; (await this.readModels.count(ATTACHMENTS, gone)) > 0; pass++) {
      if (pass === BLOB_PASSES) throw new DomainError('unavailable', 'uploads_not_removed', "The bytes of the user's uploads could not be removed yet; the erasure resumes shortly");
      await this.blobJanitor.sweep();
    }
  }

  /** A target already gone (an earlier run, or someone else): what the erasure asks for holds. */
  private async ignoringGone<T>(work: Promise<T>): Promise<T | null> {
    try {
      return await work;
    } catch (error) {
      if (error instanceof DomainError && error.category === 'not_found') return null;
      throw error;
    }
  }

  private now(): string {
    return this.clock.now().toISOString();
  }
}
