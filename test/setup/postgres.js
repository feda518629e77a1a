// The PostgreSQL server: this worker's own database, made by the global setup.
const { workerDatabaseUrl } = require('./postgres-databases');

process.env.DATABASE_URL = workerDatabaseUrl(Number(process.env.JEST_WORKER_ID ?? '1'));
