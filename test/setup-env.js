// Read by the config at app creation; set before any test module is imported.
process.env.LOG_LEVEL ??= 'error'; // request lines of 5xx answers are warnings: tests provoke many
process.env.DATA_DIR ??= 'memory://';
