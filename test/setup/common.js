// Read by the config at app creation; set before any test module is imported.
// The apps of a test file log nothing: tests provoke failures, retries and errors on purpose, and a
// passing run prints only Jest's report. `LOG_LEVEL=debug npm run test:e2e -- test/<file>` shows a
// file's logs; the tests of the log itself read a child process's (test/support/child-service.ts).
process.env.LOG_LEVEL ??= 'silent';
process.env.DATA_DIR ??= 'memory://';
