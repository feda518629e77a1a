// Every test of the project in one Jest run, as three projects: `unit` (the specs beside the code),
// and the end-to-end suites on both databases, `embedded` (PGlite, in memory) and `postgres` (a
// server). `--selectProjects` picks some. Workers run files in parallel; on the server each worker has
// a database of its own, since a suite empties the tables when it starts.
const root = require('node:path').resolve(__dirname, '..');
const typescript = {
  moduleFileExtensions: ['ts', 'js', 'json'],
  // TEST_OPEN_HANDLES=<file> lists what each test file leaves open (test/setup/open-handles.js);
  // process-monitors.js stops the process-wide monitors a file's apps started
  setupFilesAfterEnv: ['<rootDir>/test/setup/open-handles.js', '<rootDir>/test/setup/process-monitors.js'],
  // the build (dist/, with its copy of package.json) is run by the boot tests, never imported
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
  transform: require('./setup/swc-transform'),
};

/**
 * The end-to-end files that apply to the other database only (a line `// @database embedded` or
 * `// @database postgres` in the file; test/support/databases.ts): a project leaves them out, so
 * that no suite is skipped for want of its database.
 */
function filesOfOtherDatabase(database) {
  const { readdirSync, readFileSync } = require('node:fs');
  const dir = require('node:path').join(root, 'test');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.e2e-spec.ts'))
    .filter((name) => {
      const marked = /^\/\/ @database (embedded|postgres)$/m.exec(readFileSync(`${dir}/${name}`, 'utf8'));
      return marked !== null && marked[1] !== database;
    })
    .map((name) => `<rootDir>/test/${name.replace(/\./g, '\\.')}$`);
}

const endToEnd = {
  ...typescript,
  rootDir: root,
  testEnvironment: 'node',
  testRegex: 'test/.*\\.e2e-spec\\.ts$',
};

module.exports = {
  rootDir: root,
  testTimeout: 60_000,
  // A worker past this heap after a file is replaced by a fresh one: a large worker takes longer than
  // Jest's 500 ms to exit ("A worker process has failed to exit gracefully").
  workerIdleMemoryLimit: '512MB',
  projects: [
    {
      ...typescript,
      displayName: 'unit',
      rootDir: root,
      setupFiles: ['<rootDir>/test/setup/unit.js'],
      testEnvironment: 'node',
      testRegex: 'src/.*\\.spec\\.ts$',
    },
    {
      ...endToEnd,
      displayName: 'embedded',
      testPathIgnorePatterns: ['/node_modules/', ...filesOfOtherDatabase('embedded')],
      globalSetup: '<rootDir>/test/setup/embedded-template.ts',
      globalTeardown: '<rootDir>/test/setup/embedded-template-teardown.ts',
      setupFiles: ['<rootDir>/test/setup/common.js', '<rootDir>/test/setup/embedded.js'],
    },
    {
      ...endToEnd,
      displayName: 'postgres',
      testPathIgnorePatterns: ['/node_modules/', ...filesOfOtherDatabase('postgres')],
      globalSetup: '<rootDir>/test/setup/postgres-databases.ts',
      globalTeardown: '<rootDir>/test/setup/postgres-databases-teardown.ts',
      setupFiles: ['<rootDir>/test/setup/common.js', '<rootDir>/test/setup/postgres.js'],
    },
  ],
};
