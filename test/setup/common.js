// Read by the config at app creation; set before any test module is imported.
process.env.LOG_LEVEL ??= 'error'; // warnings are expected: tests provoke upstream failures and retries
process.env.DATA_DIR ??= 'memory://';
