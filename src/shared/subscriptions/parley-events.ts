import { unprocessable } from '../domain/errors';

/**
 * Reads a subscription's `?parley_events=<family>,…`: the families of Parley's own live events
 * it asks for, out of those its route knows. Parley's events are opt-in on every subscription
 * the original SDKs open, because chatkit-android's subscription parsers (rooms and the user
 * subscription alike) answer an event name they do not know with a parse failure that
 * pusher-platform-android hands to the subscription's error path. An unknown family is refused
 * before the stream opens, so a typo is not mistaken for a quiet stream.
 */
export const parseEventFamilies = <Family extends string>(raw: string | null, known: readonly Family[]): ReadonlySet<Family> => {
  if (raw === null || raw.trim() === '') return new Set();
  const asked = raw.split(',').map((name) => name.trim());
  const unknown = asked.filter((name) => !(known as readonly string[]).includes(name));
  if (unknown.length > 0) {
    const families = known.length > 0 ? `parley_events names event families from: ${known.join(', ')}` : 'This subscription takes no parley_events';
    throw unprocessable('invalid_parley_events', `${families} (unknown: ${unknown.join(', ')})`);
  }
  return new Set(asked as Family[]);
};
