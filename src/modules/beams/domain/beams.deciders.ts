import { Decider } from '../../../shared/domain/decider';
import { streamName } from '../../../shared/domain/streams';
import { BeamsPublishEvent, BeamsUserEvent, PublishTarget } from './beams.events';

/** One stream per publish (`beamspublish-<instance>.<publishId>`): accepted, then (later) delivery progress. */
export const BEAMS_PUBLISH_CATEGORY = 'beamspublish';
export const beamsPublishStream = (instanceId: string, publishId: string) => streamName(BEAMS_PUBLISH_CATEGORY, instanceId, publishId);

/** One stream per Beams user (`beamsuser-<instance>.<userId>`). */
export const BEAMS_USER_CATEGORY = 'beamsuser';
export const beamsUserStream = (instanceId: string, userId: string) => streamName(BEAMS_USER_CATEGORY, instanceId, userId);

export interface PublishState {
  readonly accepted: boolean;
  readonly delivered: boolean;
}

export interface AcceptPublish {
  readonly type: 'AcceptPublish';
  readonly publishId: string;
  readonly target: PublishTarget;
  readonly request: Record<string, unknown>;
  readonly webhookUrl: string | null;
  readonly now: string;
}

export interface RecordDelivery {
  readonly type: 'RecordDelivery';
  readonly devices: number;
  readonly delivered: number;
  readonly failed: number;
  readonly removed: number;
  readonly now: string;
}

/** A publish is accepted once and delivered once: the same command decided again (a retry, a second worker) adds nothing. */
export const beamsPublishDecider: Decider<PublishState, AcceptPublish | RecordDelivery, BeamsPublishEvent> = {
  initialState: () => ({ accepted: false, delivered: false }),
  evolve: (state, event) =>
    event.type === 'BeamsPublishAccepted'
      ? { ...state, accepted: true }
      : event.type === 'BeamsPublishDelivered'
      ? { ...state, delivered: true }
      : state,
  decide: (command, state) =>
    command.type === 'RecordDelivery'
      ? !state.accepted || state.delivered
        ? []
        : [
            {
              type: 'BeamsPublishDelivered',
              data: {
                devices: command.devices,
                delivered: command.delivered,
                failed: command.failed,
                removed: command.removed,
                delivered_at: command.now,
              },
            },
          ]
      : state.accepted
      ? []
      : [
          {
            type: 'BeamsPublishAccepted',
            data: {
              publish_id: command.publishId,
              target: command.target,
              request: command.request,
              webhook_url: command.webhookUrl,
              accepted_at: command.now,
            },
          },
        ],
};

export interface DeleteBeamsUser {
  readonly type: 'DeleteBeamsUser';
  readonly userId: string;
  readonly now: string;
}

/**
 * Deleting a user is recorded every time it is asked for: a user may register devices again
 * after a delete, and each delete forgets the devices known at that point.
 */
export const beamsUserDecider: Decider<null, DeleteBeamsUser, BeamsUserEvent> = {
  initialState: () => null,
  evolve: (state) => state,
  decide: (command) => [{ type: 'BeamsUserDeleted', data: { user_id: command.userId, deleted_at: command.now } }],
  foldsFrom: () => true,
};
