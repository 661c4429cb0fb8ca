// Prints what was skipped and why, then "N passed, M failed, K skipped" from the counts the jest
// reporter recorded (test/support/summary-reporter.js), and exits with jest's exit code (given
// as the first argument). Without counts the run failed before testing. Given a tier's name as
// the second argument (`npm run test:unit`), it also says how long the tier's jest run took.
const { readFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');

const file = process.env.PARLEY_TEST_RESULTS || join(__dirname, '..', '.results.json');
const code = Number(process.argv[2] ?? 1);
const tier = process.argv[3];
let counts = { passed: 0, failed: 1, skipped: 0, reasons: [] };
try {
  counts = JSON.parse(readFileSync(file, 'utf8'));
  rmSync(file);
} catch {
  /* jest did not get to report */
}
const lines = counts.reasons.map(({ reason, tests }) => `${reason}: ${tests} test${tests === 1 ? '' : 's'} not run`);
if (tier && counts.seconds !== undefined) lines.push(`${tier} took ${counts.seconds.toFixed(1)} s`);
process.stdout.write(`\n${lines.map((l) => `${l}\n`).join('')}\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
process.exit(code === 0 && counts.failed === 0 ? 0 : code || 1);
