import { Decider } from '../../../shared/domain/decider';
import { streamName } from '../../../shared/domain/streams';
import { BeamsPublishEvent, BeamsPublishWebhookAttempted, BeamsUserEvent, PublishTarget } from './beams.events';

/** One stream per publish (`beamspublish-<instance>.<publishId>`): accepted, then (later) delivery progress. */
export const BEAMS_PUBLISH_CATEGORY = 'beamspublish';
export const beamsPublishStream = (instanceId: string, publishId: string) => streamName(BEAMS_PUBLISH_CATEGORY, instanceId, publishId);

/** One stream per Beams user (`beamsuser-<instance>.<userId>`). */
export const BEAMS_USER_CATEGORY = 'beamsuser';
export const beamsUserStream = (instanceId: string, userId: string) => streamName(BEAMS_USER_CATEGORY, instanceId, userId);

export interface PublishState {
  readonly accepted: boolean;
  readonly delivered: boolean;
  /** Webhook attempts made, by webhook event type. */
  readonly webhookAttempts: Readonly<Record<string, number>>;
  /** Webhook event types delivered or given up. */
  readonly webhooksSettled: readonly string[];
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

export interface RecordWebhookAttempt {
  readonly type: 'RecordWebhookAttempt';
  readonly attempt: BeamsPublishWebhookAttempted['data'];
}

/** A webhook attempt is recorded once (a second sender of the same attempt adds nothing), and none after its webhook settled. */
const decideWebhookAttempt = ({ attempt }: RecordWebhookAttempt, state: PublishState): BeamsPublishEvent[] =>
  !state.accepted ||
  state.webhooksSettled.includes(attempt.event_type) ||
  attempt.attempt !== (state.webhookAttempts[attempt.event_type] ?? 0) + 1
    ? []
    : [{ type: 'BeamsPublishWebhookAttempted', data: attempt }];

const evolvePublish = (state: PublishState, event: BeamsPublishEvent): PublishState => {
  switch (event.type) {
    case 'BeamsPublishAccepted':
      return { ...state, accepted: true };
    case 'BeamsPublishDelivered':
      return { ...state, delivered: true };
    case 'BeamsPublishWebhookAttempted': {
      const { event_type: type, attempt, outcome } = event.data;
      return {
        ...state,
        webhookAttempts: { ...state.webhookAttempts, [type]: attempt },
        webhooksSettled: outcome === 'retrying' ? state.webhooksSettled : [...state.webhooksSettled, type],
      };
    }
  }
};

/** A publish is accepted once and delivered once: the same command decided again (a retry, a second worker) adds nothing. */
export const beamsPublishDecider: Decider<PublishState, AcceptPublish | RecordDelivery | RecordWebhookAttempt, BeamsPublishEvent> = {
  initialState: () => ({ accepted: false, delivered: false, webhookAttempts: {}, webhooksSettled: [] }),
  evolve: evolvePublish,
  decide: (command, state) =>
    command.type === 'RecordWebhookAttempt'
      ? decideWebhookAttempt(command, state)
      : command.type === 'RecordDelivery'
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
  /** The devices associated with the user, and the publishes to the user not yet delivered: destroyed with the delete. */
  readonly deviceIds: readonly string[];
  readonly publishIds: readonly string[];
  readonly now: string;
}

/**
 * Deleting a user is recorded every time it is asked for: a user may register devices again
 * after a delete, and each delete forgets the devices known at that point.
 */
export const beamsUserDecider: Decider<null, DeleteBeamsUser, BeamsUserEvent> = {
  initialState: () => null,
  evolve: (state) => state,
  decide: (command) => [
    {
      type: 'BeamsUserDeleted',
      data: { user_id: command.userId, deleted_at: command.now, device_ids: [...command.deviceIds], publish_ids: [...command.publishIds] },
    },
  ],
  foldsFrom: () => true,
};
