import { Decider } from '../../../shared/domain/decider';
import { BeamsPublishEvent, BeamsPublishWebhookAttempted } from '../domain/beams.events';

/** What a publish's stream says of its webhooks: attempts made per event type, and which are settled. */
export interface WebhookState {
  readonly attempts: Readonly<Record<string, number>>;
  readonly settled: readonly string[];
}

export interface RecordWebhookAttempt {
  readonly type: 'RecordWebhookAttempt';
  readonly attempt: BeamsPublishWebhookAttempted['data'];
}

/**
 * An attempt is recorded once: a second process that sent the same attempt (its lease ran
 * out) or a retried append adds nothing, and nothing is recorded after a webhook settled.
 */
export const webhookAttemptDecider: Decider<WebhookState, RecordWebhookAttempt, BeamsPublishEvent> = {
  initialState: () => ({ attempts: {}, settled: [] }),
  evolve: (state, event) => {
    if (event.type !== 'BeamsPublishWebhookAttempted') return state;
    const { event_type: type, attempt, outcome } = event.data;
    return {
      attempts: { ...state.attempts, [type]: attempt },
      settled: outcome === 'retrying' ? state.settled : [...state.settled, type],
    };
  },
  decide: ({ attempt }, state) =>
    state.settled.includes(attempt.event_type) || attempt.attempt !== (state.attempts[attempt.event_type] ?? 0) + 1
      ? []
      : [{ type: 'BeamsPublishWebhookAttempted', data: attempt }],
};
