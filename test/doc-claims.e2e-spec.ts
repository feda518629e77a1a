// @database embedded
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { servedRoutes } from './support/served-routes';
import { useTestApp } from './support/test-app';

const ROOT = join(__dirname, '..');
const read = (...path: string[]) => readFileSync(join(ROOT, ...path), 'utf8');
const unique = (items: Iterable<string>) => [...new Set(items)].sort();

/** The source files of the service, specs left out. */
function sources(dir = join(ROOT, 'src')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [readFileSync(path, 'utf8')] : [];
  });
}

/** The rows of the first table under `## heading` in a doc. */
function tableRows(doc: string, heading: string): string[] {
  const section = doc.split(/^## /m).find((part) => part.startsWith(`${heading}\n`));
  if (section === undefined) throw new Error(`no section "## ${heading}"`);
  return section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| --'));
}

/** What the docs say that a test can check: variables, error codes and routes, both ways where it can. */
describe('The docs', () => {
  it('CONFIGURATION.md lists every variable the configuration reads, and no other', () => {
    const config = read('src', 'config', 'app-config.ts');
    const readByConfig = unique([...config.matchAll(/read\.\w+\(\s*'([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]));
    const rows = read('docs', 'CONFIGURATION.md')
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    const documented = unique(
      rows.flatMap((row) => [...row.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1])),
    );
    expect(readByConfig.length).toBeGreaterThan(40);
    expect(documented).toEqual(readByConfig);
  });

  it("API.md's error codes are the codes the service answers with", () => {
    const code = sources().join('\n');
    const thrown = unique(
      [
        ...code.matchAll(/new ApiError\(\s*HttpStatus\.\w+,\s*'([a-z_]+)'/g),
        ...code.matchAll(/invalidField\(\s*[^,]+,\s*'([a-z_]+)'/g),
        // class-validator decorators name their code in their context
        ...code.matchAll(/context: \{\s*code: '([a-z_]+)'/g),
      ].map((m) => m[1]),
    );
    const rows = tableRows(read('docs', 'API.md'), 'Errors').slice(1);
    const documented = unique(
      rows.flatMap((row) => [...row.split('|')[2].matchAll(/`([a-z_]+)`/g)].map((m) => m[1])),
    );
    // every documented code is in the code, and every code thrown by name is documented
    expect(documented.filter((name) => !code.includes(`'${name}'`))).toEqual([]);
    expect(thrown.filter((name) => !documented.includes(name))).toEqual([]);
    expect(thrown.length).toBeGreaterThan(10);
  });

  describe('API.md and the routes the app serves', () => {
    const t = useTestApp();

    it('lists every route the app serves, and no other', () => {
      const rows = tableRows(read('docs', 'API.md'), 'Endpoints').slice(1);
      const documented = unique(
        rows.flatMap((row) =>
          [...row.split('|')[1].matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`]*)`/g)].map(
            (m) => `${m[1]} ${m[2]}`,
          ),
        ),
      );
      expect(documented).toEqual(unique(servedRoutes(t)));
    });
  });
});
