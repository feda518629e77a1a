// Read by the config at app creation; set before any test module is imported.
process.env.LOG_LEVEL ??= 'warn';
process.env.DATA_DIR ??= 'memory://';
