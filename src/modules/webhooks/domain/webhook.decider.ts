import { Decider } from '../../../shared/domain/decider';
import { notFound } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { WebhookDeactivated, WebhookEvent, WebhookRedeliveryRequested, WebhookSettings } from './webhook.events';

/** One stream per webhook: its settings, activation and replays. */
export const WEBHOOK_CATEGORY = 'webhook';
export const webhookStream = (instanceId: string, webhookId: string) => streamName(WEBHOOK_CATEGORY, instanceId, webhookId);

export interface WebhookState {
  /** null: never created; `deleted`: gone (its id is never reused). */
  readonly status: 'live' | 'deleted' | null;
  readonly settings: WebhookSettings | null;
  readonly active: boolean;
  readonly deactivation: WebhookDeactivated['data'] | null;
  readonly replay: number;
  readonly replayFrom: string | null;
  /** Redeliveries requested so far, and the latest few (a worker sends those its checkpoint has not passed). */
  readonly redeliveries: number;
  readonly pendingRedeliveries: readonly WebhookRedeliveryRequested['data'][];
  readonly createdAt: string | null;
  readonly updatedAt: string | null;
}

export type WebhookCommand =
  | { type: 'CreateWebhook'; settings: WebhookSettings; now: string }
  | { type: 'UpdateWebhook'; settings: WebhookSettings; active?: boolean; now: string }
  | { type: 'DeactivateWebhook'; failure: Omit<WebhookDeactivated['data'], 'by' | 'at'>; now: string }
  | { type: 'ReplayWebhook'; fromPosition: string | null; now: string }
  | { type: 'RedeliverDelivery'; delivery: Omit<WebhookRedeliveryRequested['data'], 'redelivery' | 'at'>; now: string }
  | { type: 'DeleteWebhook'; now: string };

/**
 * Redelivery requests a webhook's state keeps. Its worker sends each within a sweep of its
 * request; one more than this many requests behind (the webhook inactive meanwhile) is not sent.
 */
export const MAX_PENDING_REDELIVERIES = 100;

export const webhookNotFound = (id: string) => notFound('webhook_not_found', `There is no webhook "${id}"`);

/**
 * A webhook. Deactivating one that is inactive decides nothing, so two workers that both saw the
 * last attempt fail (one lost its lease meanwhile) record it once.
 */
export const webhookDecider: Decider<WebhookState, WebhookCommand, WebhookEvent> = {
  initialState: () => ({ status: null, settings: null, active: false, deactivation: null, replay: 0, replayFrom: null, redeliveries: 0, pendingRedeliveries: [], createdAt: null, updatedAt: null }),

  evolve(state, event) {
    switch (event.type) {
      case 'WebhookCreated': {
        const { created_at, ...settings } = event.data;
        return { ...state, status: 'live', settings, active: true, createdAt: created_at, updatedAt: created_at };
      }
      case 'WebhookUpdated': {
        const { updated_at, ...settings } = event.data;
        return { ...state, settings, updatedAt: updated_at };
      }
      case 'WebhookDeactivated':
        return { ...state, active: false, deactivation: event.data, updatedAt: event.data.at };
      case 'WebhookActivated':
        return { ...state, active: true, deactivation: null, updatedAt: event.data.at };
      case 'WebhookReplayRequested':
        return { ...state, replay: event.data.replay, replayFrom: event.data.from_position, updatedAt: event.data.at };
      case 'WebhookRedeliveryRequested':
        return {
          ...state,
          redeliveries: event.data.redelivery,
          pendingRedeliveries: [...state.pendingRedeliveries, event.data].slice(-MAX_PENDING_REDELIVERIES),
          updatedAt: event.data.at,
        };
      case 'WebhookDeleted':
        return { ...state, status: 'deleted', active: false, updatedAt: event.data.deleted_at };
      default:
        return state;
    }
  },

  decide(command, state) {
    if (command.type === 'CreateWebhook') {
      if (state.status !== null) return []; // the same id created again: nothing new
      return [{ type: 'WebhookCreated', data: { ...command.settings, created_at: command.now } }];
    }
    if (state.status !== 'live') throw webhookNotFound('');
    switch (command.type) {
      case 'UpdateWebhook': {
        const events: WebhookEvent[] = [{ type: 'WebhookUpdated', data: { ...command.settings, updated_at: command.now } }];
        if (command.active === true && !state.active) events.push({ type: 'WebhookActivated', data: { at: command.now } });
        if (command.active === false && state.active) events.push({ type: 'WebhookDeactivated', data: { by: 'request', at: command.now } });
        return events;
      }
      case 'DeactivateWebhook':
        if (!state.active) return [];
        return [{ type: 'WebhookDeactivated', data: { by: 'delivery', ...command.failure, at: command.now } }];
      case 'ReplayWebhook':
        return [{ type: 'WebhookReplayRequested', data: { replay: state.replay + 1, from_position: command.fromPosition, at: command.now } }];
      case 'RedeliverDelivery':
        return [{ type: 'WebhookRedeliveryRequested', data: { redelivery: state.redeliveries + 1, ...command.delivery, at: command.now } }];
      case 'DeleteWebhook':
        return [{ type: 'WebhookDeleted', data: { deleted_at: command.now } }];
    }
  },
};
