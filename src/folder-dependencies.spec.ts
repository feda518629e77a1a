import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { preProcessFile } from 'typescript';

const SOURCE_ROOT = __dirname;

/**
 * Each folder directly under `root`, with the folders its code (specs aside) imports, and from which
 * files.
 */
function folderImports(root: string): Map<string, Map<string, string[]>> {
  const folders = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  const graph = new Map<string, Map<string, string[]>>();
  for (const folder of folders) {
    const imports = new Map<string, string[]>();
    graph.set(folder, imports);
    for (const file of sourceFiles(join(root, folder))) {
      // import, import type, export ... from, import(), require()
      for (const { fileName } of preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
        if (!fileName.startsWith('.')) continue;
        const target = relative(root, resolve(dirname(file), fileName)).split(sep)[0];
        if (target === folder || !folders.includes(target)) continue;
        const files = imports.get(target) ?? [];
        if (!files.includes(relative(root, file))) files.push(relative(root, file));
        imports.set(target, files);
      }
    }
  }
  return graph;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Every path of folders that leads back to where it started, each found from its first folder in order. */
function cycles(graph: Map<string, Map<string, string[]>>): string[][] {
  const found: string[][] = [];
  const names = [...graph.keys()].sort();
  for (const start of names) {
    // only cycles whose smallest folder is `start`, so that each is reported once
    const walk = (path: string[]): void => {
      for (const next of [...(graph.get(path[path.length - 1])?.keys() ?? [])].sort()) {
        if (next === start) found.push([...path, start]);
        else if (next > start && !path.includes(next)) walk([...path, next]);
      }
    };
    walk([start]);
  }
  return found;
}

describe('folder dependencies of src/', () => {
  it('has no cycle: no folder imports, directly or through others, a folder that imports it', () => {
    const graph = folderImports(SOURCE_ROOT);
    const described = cycles(graph).map((cycle) =>
      cycle
        .slice(1)
        .map((to, index) => `${cycle[index]} -> ${to} (${graph.get(cycle[index])!.get(to)!.join(', ')})`)
        .join('; '),
    );
    expect(described).toEqual([]);
  });

  it('finds a cycle made by a type-only import, a re-export and a dynamic import, and ignores specs', () => {
    const root = mkdtempSync(join(tmpdir(), 'folders-'));
    try {
      const write = (path: string, text: string) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      write('a/x.ts', "import type { B } from '../b/y';\nexport type A = B;\n");
      write('b/y.ts', "export { C as B } from '../c/nested/z';\n");
      write('c/nested/z.ts', "export const C = () => import('../../a/x');\n");
      write('d/w.ts', "import { A } from '../a/x';\n");
      write('e/v.ts', 'export const E = 1;\n');
      write('e/v.spec.ts', "import { A } from '../a/x';\nimport { E } from '../e/v';\n");
      write('a/u.ts', "import { E } from '../e/v';\n");
      expect(cycles(folderImports(root))).toEqual([['a', 'b', 'c', 'a']]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
