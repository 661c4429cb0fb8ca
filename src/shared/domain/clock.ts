/** Injected wherever time is decided, so deciders stay pure and tests can pin time. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export const iso = (d: Date): string => d.toISOString();
