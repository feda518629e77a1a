// Creates or drops a throwaway database for the end-to-end suite on a PostgreSQL server.
// Usage: node scripts/pg-test-db.js create|drop <admin-url> <database>
const { Client } = require('pg');

async function main() {
  const [action, adminUrl, database] = process.argv.slice(2);
  if (!['create', 'drop'].includes(action) || !adminUrl || !/^[a-z0-9_]+$/.test(database ?? '')) {
    throw new Error('usage: pg-test-db.js create|drop <admin-url> <database>');
  }
  const client = new Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `cannot reach PostgreSQL at ${adminUrl} (${error.message}). Start it, or point TEST_PG_ADMIN_URL at a server.`,
      { cause: error },
    );
  }
  try {
    if (action === 'create') await client.query(`CREATE DATABASE ${database}`);
    else await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
