// Records jest's own counts so that `npm test` can end with the plain line CI reads,
// "N passed, M failed", after jest's summary (see test/support/print-summary.js).
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    writeFileSync(join(__dirname, '..', '.results.json'), JSON.stringify({ passed: results.numPassedTests, failed }));
  }
}
module.exports = SummaryReporter;
