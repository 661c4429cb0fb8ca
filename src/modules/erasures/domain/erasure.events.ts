import { Actor, DomainEvent } from '../../../shared/domain/event';

/**
 * What an erasure removed, counted as it goes. `unshreddable_plaintext_events`: events of the
 * user written before sealing (profile events, messages and their edits in plain text in the
 * log), which no key destroy reaches: the offline rewrite (`npm run admin -- data-dir:seal`) does.
 */
export interface ErasureCounts {
  /** 1 when the erasure deleted the user (0: already deleted, or another incarnation of the id by then). */
  readonly user: number;
  /** Messages the user sent that the erasure turned into tombstones (their content destroyed). */
  readonly messages: number;
  /** The user's uploads (v6 attachments and files) that were not deleted yet. */
  readonly attachments: number;
  readonly cursors: number;
  readonly beams_devices: number;
  readonly unshreddable_plaintext_events: number;
}

/**
 * Where an erasure stands. `counted`: what the user holds was counted (before anything went);
 * `user_erased`: the user, its profile keys, cursors and Beams devices are gone; `messages`:
 * the log was scanned for the user's messages up to `scanned_to`.
 */
export type ErasureStep = 'counted' | 'user_erased' | 'messages';

/**
 * Erasure events hold no personal data: the user id (an identifier every event of the user's
 * stream names too), the incarnation erased and who asked (the key or the CLI), never a profile
 * field or content. The steps are recorded under that actor, whenever they run.
 */
export type ErasureRequested = DomainEvent<
  'ErasureRequested',
  { user_id: string; user_created_at: string; requested_by: Actor; requested_at: string }
>;
/**
 * `erasing`: the ids of the messages about to become tombstones, recorded before them so that
 * the keys of all their versions are destroyed in one write (ids are never sealed).
 */
export type ErasureProgressed = DomainEvent<
  'ErasureProgressed',
  { step: ErasureStep; scanned_to: string | null; counts: ErasureCounts; erasing?: number[]; at: string }
>;
export type ErasureCompleted = DomainEvent<'ErasureCompleted', { counts: ErasureCounts; completed_at: string }>;

export type ErasureEvent = ErasureRequested | ErasureProgressed | ErasureCompleted;

export const ERASURE_EVENT_TYPES: ErasureEvent['type'][] = ['ErasureRequested', 'ErasureProgressed', 'ErasureCompleted'];
