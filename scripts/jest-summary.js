// A Jest reporter (scripts/test-all.sh adds it to the default one): the run's closing line, every test
// counted across the projects.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const passed = results.numPassedTests;
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    process.stdout.write(
      `${passed} passed, ${skipped} skipped, ${failed} failed (${results.numTotalTests} tests)\n`,
    );
  }
}

module.exports = SummaryReporter;
