// Records jest's own counts so that `npm test` can end with the plain line CI reads,
// "N passed, M failed, K skipped", after jest's summary (see test/support/print-summary.js),
// and which suites and tests were skipped and why: those registered with a `SKIPPED: <what>
// (<why>)` name (test/support/skipped.ts) by their name, any other skipped test by its own.
// With them goes how long jest's process has run, for a tier that prints its time.
// PARLEY_TEST_RESULTS names the file (default test/.results.json).
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const resultsFile = () => process.env.PARLEY_TEST_RESULTS || join(__dirname, '..', '.results.json');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    /** Why tests did not run: each reason with how many tests it covers, in the order met. */
    const reasons = new Map();
    for (const file of results.testResults) {
      for (const test of file.testResults) {
        if (test.status !== 'pending' && test.status !== 'todo' && test.status !== 'skipped') continue;
        const named = [...test.ancestorTitles, test.title].find((title) => title.startsWith('SKIPPED: '));
        const reason = named ?? `SKIPPED: ${test.fullName}`;
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
    }
    writeFileSync(
      resultsFile(),
      JSON.stringify({
        passed: results.numPassedTests,
        failed,
        skipped,
        reasons: [...reasons].map(([reason, tests]) => ({ reason, tests })),
        seconds: process.uptime(),
      }),
    );
  }
}
module.exports = SummaryReporter;
