/**
 * The name of a suite or test that cannot run on this machine, registered with jest's
 * `describe.skip`/`it.skip`: jest counts it as skipped (never as passed), and the closing
 * summary (test/support/summary-reporter.js) lists each such name, so a green run never hides
 * what did not run.
 */
export const SKIPPED_PREFIX = 'SKIPPED: ';

export const skippedTitle = (what: string, why: string): string => `${SKIPPED_PREFIX}${what} (${why})`;
