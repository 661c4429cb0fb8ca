import { badRequest, unprocessable } from '../../shared/domain/errors';
import { Ban, MAX_BAN_REASON } from './domain/restrictions.decider';

/** What a ban request says: `{reason?, until?, shadow?}`. */
export interface BanTerms {
  readonly reason: string;
  readonly until?: string;
  readonly shadow: boolean;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The body of a ban, checked (an empty body: a ban with no reason, no end, not shadowed). */
export function parseBanTerms(body: unknown): BanTerms {
  if (body === undefined || body === null || body === '') return { reason: '', shadow: false };
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('invalid_body', 'The body is a JSON object: {reason?, until?, shadow?}');
  const { reason, until, shadow } = body as { reason?: unknown; until?: unknown; shadow?: unknown };
  if (reason !== undefined && reason !== null && typeof reason !== 'string') throw unprocessable('invalid_reason', 'reason must be a string');
  if (typeof reason === 'string' && [...reason].length > MAX_BAN_REASON) {
    throw unprocessable('reason_too_long', `reason must be at most ${MAX_BAN_REASON} characters`);
  }
  if (shadow !== undefined && shadow !== null && typeof shadow !== 'boolean') throw unprocessable('invalid_shadow', 'shadow must be true or false');
  let end: string | undefined;
  if (until !== undefined && until !== null) {
    if (typeof until !== 'string' || !RFC3339.test(until) || Number.isNaN(Date.parse(until))) {
      throw unprocessable('invalid_until', 'until must be a time in the future (RFC 3339)');
    }
    end = new Date(until).toISOString();
  }
  return { reason: typeof reason === 'string' ? reason : '', shadow: shadow === true, ...(end !== undefined && { until: end }) };
}

/** A ban as Parley's answers show it. */
export interface BanResponse {
  readonly user_id: string;
  readonly room_id?: string;
  readonly reason: string;
  readonly shadow: boolean;
  readonly banned_by?: string;
  readonly banned_at: string;
  readonly until?: string;
}

export const presentBan = (ban: Ban, roomId: string | undefined): BanResponse => ({
  user_id: ban.userId,
  ...(roomId !== undefined && { room_id: roomId }),
  reason: ban.reason,
  shadow: ban.shadow,
  ...(ban.bannedBy !== undefined && { banned_by: ban.bannedBy }),
  banned_at: ban.bannedAt,
  ...(ban.until !== undefined && { until: ban.until }),
});
