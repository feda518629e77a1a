// @database embedded
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The console's API types are generated from the built service's OpenAPI document
 * (`npm run console:api-types`); a change of the API that is not carried over fails here. The document
 * does not depend on the database, so this runs on the embedded one only.
 */
describe('Console API types', () => {
  it('match the OpenAPI document of the built service', async () => {
    const script = join(__dirname, '..', 'scripts', 'console-api-types.js');
    await expect(promisify(execFile)(process.execPath, [script, '--check'])).resolves.toBeDefined();
  }, 180_000);
});
