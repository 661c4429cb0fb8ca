import { skippedTitle } from '../support/skipped';

/**
 * Binds a contract suite to a real server only when its connection variable is set. Otherwise
 * the same tests are registered as skipped under `SKIPPED: <suite> (<VARIABLE> is not set)`, so
 * jest counts each of them as skipped and the run's closing lines say why. `bind` must use the
 * value only inside hooks and tests: a skipped suite's body still runs to register its tests,
 * with an empty value.
 */
export function describeWithEnv(variable: string, suite: string, bind: (value: string) => void): void {
  const value = process.env[variable]?.trim();
  if (value) {
    bind(value);
    return;
  }
  describe.skip(skippedTitle(suite, `${variable} is not set`), () => bind(''));
}
