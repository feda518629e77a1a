#!/usr/bin/env node
// Writes the console's API types (console/src/api-schema.d.ts) from the OpenAPI document of the built
// service (dist/, with the Swagger plugin's output), through openapi-typescript: the console's calls
// are typed by what the service documents, never by a second hand-written copy.
//   --check   write nothing; exit 1 when the committed file differs from what the document gives
const { execFileSync } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const TYPES_FILE = join(ROOT, 'console', 'src', 'api-schema.d.ts');

/** The OpenAPI document of the built service, on a throwaway in-memory database. */
async function openApiDocument() {
  process.env.DATA_DIR = 'memory://';
  process.env.LOG_LEVEL = 'error';
  // in the test run, the migrated database its global setup dumped: no migrations to wait for
  const template = process.env.PMS_TEST_PGLITE_TEMPLATE;
  if (template) {
    const { startInMemoryDatabasesFrom } = require(
      join(ROOT, 'dist', 'src', 'database', 'embedded-database.js'),
    );
    startInMemoryDatabasesFrom(new Blob([readFileSync(template)]));
  }
  const { createApp, buildOpenApiDocument } = require(join(ROOT, 'dist', 'src', 'app.setup.js'));
  const app = await createApp();
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}

/** openapi-typescript's output for the document. */
function typesOf(document) {
  const dir = mkdtempSync(join(tmpdir(), 'console-api-'));
  try {
    const input = join(dir, 'openapi.json');
    const output = join(dir, 'api-schema.d.ts');
    writeFileSync(input, JSON.stringify(document));
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'),
        input,
        '--output',
        output,
        '--alphabetize',
        '--default-non-nullable',
        'false',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    return readFileSync(output, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(args) {
  const wanted = typesOf(await openApiDocument());
  if (args.includes('--check')) {
    const committed = readFileSync(TYPES_FILE, 'utf8');
    if (committed === wanted) return 0;
    console.error(`${TYPES_FILE} differs from the service's OpenAPI document: run npm run console:api-types`);
    return 1;
  }
  writeFileSync(TYPES_FILE, wanted);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
module.exports = { main };
