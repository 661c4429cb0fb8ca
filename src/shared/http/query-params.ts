import { unprocessable } from '../domain/errors';

/** A page size from the query string: `fallback` when absent, else a whole number from 1 to `max` (422 otherwise). */
export const parseLimit = (raw: unknown, { fallback, max }: { fallback: number; max: number }): number => {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw unprocessable('invalid_limit', `limit must be a whole number from 1 to ${max}`);
  }
  return n;
};
