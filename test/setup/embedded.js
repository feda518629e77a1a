// The embedded database, in memory, started from the migrated dump of the global setup.
delete process.env.DATABASE_URL;
const { readFileSync } = require('node:fs');
const { startInMemoryDatabasesFrom } = require('../../src/database/embedded-database');
const { TEMPLATE_ENV } = require('./embedded-template');

startInMemoryDatabasesFrom(new Blob([readFileSync(process.env[TEMPLATE_ENV])]));
