// Prints "N passed, M failed" from the counts the jest reporter recorded, and exits with
// jest's exit code (given as the first argument). Without counts the run failed before testing.
const { readFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');

const file = join(__dirname, '..', '.results.json');
const code = Number(process.argv[2] ?? 1);
let counts = { passed: 0, failed: 1 };
try {
  counts = JSON.parse(readFileSync(file, 'utf8'));
  rmSync(file);
} catch {
  /* jest did not get to report */
}
process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed\n`);
process.exit(code === 0 && counts.failed === 0 ? 0 : code || 1);
