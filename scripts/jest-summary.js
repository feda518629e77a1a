// The closing line of scripts/test-all.sh, from Jest's JSON report: every test counted.
const { readFileSync } = require('node:fs');

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const passed = report.numPassedTests;
const skipped = report.numPendingTests + report.numTodoTests;
const failed = report.numFailedTests + report.numRuntimeErrorTestSuites;
console.log(`${passed} passed, ${skipped} skipped, ${failed} failed (${report.numTotalTests} tests)`);
process.exit(failed === 0 && passed > 0 && report.success ? 0 : 1);
