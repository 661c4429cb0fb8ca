import { Decider } from '../../../shared/domain/decider';
import { notFound } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { streamName } from '../../../shared/domain/streams';
import { ErasureCounts, ErasureEvent, ErasureStep } from './erasure.events';

/** One stream per erasure: requested, progress checkpoints, completed. */
export const ERASURE_CATEGORY = 'erasure';
export const erasureStream = (instanceId: string, erasureId: string) => streamName(ERASURE_CATEGORY, instanceId, erasureId);

/** `pending`: requested, not begun; `running`: a step recorded; `completed`: everything erased. */
export type ErasureStatus = 'pending' | 'running' | 'completed';

export const NO_COUNTS: ErasureCounts = { user: 0, messages: 0, attachments: 0, cursors: 0, beams_devices: 0, unshreddable_plaintext_events: 0 };

export interface ErasureState {
  readonly status: ErasureStatus | null;
  readonly userId: string | null;
  /** The incarnation of the user id erased: a user created again with the id later is another person. */
  readonly userCreatedAt: string | null;
  readonly requestedBy: Actor | null;
  readonly requestedAt: string | null;
  readonly step: ErasureStep | null;
  /** How far the scan of the log for the user's messages went (exclusive start of the next page). */
  readonly scannedTo: string | null;
  readonly counts: ErasureCounts;
  readonly completedAt: string | null;
}

export type ErasureCommand =
  | { type: 'RequestErasure'; userId: string; userCreatedAt: string; requestedBy: Actor; now: string }
  | { type: 'RecordProgress'; step: ErasureStep; scannedTo: string | null; counts: ErasureCounts; erasing?: number[]; now: string }
  | { type: 'CompleteErasure'; counts: ErasureCounts; now: string };

export const erasureNotFound = (id: string) => notFound('erasure_not_found', `There is no erasure "${id}"`);

/**
 * An erasure, run by a worker that resumes from its last step after a restart. Recording
 * progress on, or completing, an erasure that completed decides nothing: two runs (after a
 * crash, or by two processes) end it once.
 */
export const erasureDecider: Decider<ErasureState, ErasureCommand, ErasureEvent> = {
  initialState: () => ({
    status: null,
    userId: null,
    userCreatedAt: null,
    requestedBy: null,
    requestedAt: null,
    step: null,
    scannedTo: null,
    counts: NO_COUNTS,
    completedAt: null,
  }),

  evolve(state, event) {
    switch (event.type) {
      case 'ErasureRequested':
        return {
          ...state,
          status: 'pending',
          userId: event.data.user_id,
          userCreatedAt: event.data.user_created_at,
          requestedBy: event.data.requested_by,
          requestedAt: event.data.requested_at,
        };
      case 'ErasureProgressed':
        return { ...state, status: 'running', step: event.data.step, scannedTo: event.data.scanned_to, counts: event.data.counts };
      case 'ErasureCompleted':
        return { ...state, status: 'completed', counts: event.data.counts, completedAt: event.data.completed_at };
      default:
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'RequestErasure':
        if (state.status !== null) return []; // the same erasure id requested again: nothing new
        return [
          {
            type: 'ErasureRequested',
            data: {
              user_id: command.userId,
              user_created_at: command.userCreatedAt,
              requested_by: command.requestedBy,
              requested_at: command.now,
            },
          },
        ];
      case 'RecordProgress':
        if (state.status === null || state.status === 'completed') return [];
        return [
          {
            type: 'ErasureProgressed',
            data: {
              step: command.step,
              scanned_to: command.scannedTo,
              counts: command.counts,
              ...(command.erasing?.length && { erasing: command.erasing }),
              at: command.now,
            },
          },
        ];
      case 'CompleteErasure':
        if (state.status === null || state.status === 'completed') return [];
        return [{ type: 'ErasureCompleted', data: { counts: command.counts, completed_at: command.now } }];
    }
  },
};
