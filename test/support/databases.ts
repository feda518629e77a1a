/**
 * The database of this Jest project's end-to-end suites: `postgres` when DATABASE_URL is set, else the
 * embedded one. A file that applies to one database only says so in a line `// @database postgres` (or
 * `embedded`), which test/jest.config.js reads to leave the file out of the other project; a part of a
 * file that applies to one is declared with `describeOn`.
 */
export type TestDatabase = 'embedded' | 'postgres';

export const TEST_DATABASE: TestDatabase = process.env.DATABASE_URL !== undefined ? 'postgres' : 'embedded';

/** A describe block that exists only in `database`'s project: in the other it is not declared at all. */
export function describeOn(database: TestDatabase, name: string, fn: () => void): void {
  if (TEST_DATABASE === database) describe(name, fn);
}
