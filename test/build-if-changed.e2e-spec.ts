// @database embedded
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SCRIPT = join(__dirname, '..', 'scripts', 'build-if-changed.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain script of the project
const { inputsHash } = require(SCRIPT) as { inputsHash: (root: string) => string };

/** `npm start`'s build step, asked (`--check`) whether a build is due for a small project tree. */
describe('npm start builds only when something changed', () => {
  let root: string;
  const check = () => spawnSync(process.execPath, [SCRIPT, '--check', '--root', root], { encoding: 'utf8' });
  /** What a build by the script leaves: dist/ and the hash of the inputs it was built from. */
  const markBuilt = () => {
    mkdirSync(join(root, 'dist', 'src'), { recursive: true });
    writeFileSync(join(root, 'dist', 'src', 'main.js'), '');
    writeFileSync(join(root, 'dist', '.build-hash'), `${inputsHash(root)}\n`);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'pms-build-'));
    mkdirSync(join(root, 'src', 'memories'), { recursive: true });
    writeFileSync(join(root, 'src', 'main.ts'), 'export const a = 1;\n');
    writeFileSync(join(root, 'src', 'memories', 'memories.service.ts'), 'export const b = 2;\n');
    writeFileSync(join(root, 'package.json'), '{}\n');
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is due with no build, not due after one, due again when a source or setting changes', () => {
    expect(check().status).toBe(3);
    markBuilt();
    expect(check()).toMatchObject({ status: 0, stdout: 'dist/ is up to date\n' });

    // a file touched (a checkout, a save without a change) does not rebuild
    utimesSync(join(root, 'src', 'main.ts'), new Date(), new Date(Date.now() + 60_000));
    expect(check().status).toBe(0);
    // a spec is not compiled into dist/
    writeFileSync(join(root, 'src', 'main.spec.ts'), 'test\n');
    expect(check().status).toBe(0);

    writeFileSync(join(root, 'src', 'memories', 'memories.service.ts'), 'export const b = 3;\n');
    expect(check().status).toBe(3);
    markBuilt();
    writeFileSync(join(root, 'src', 'memories', 'new.ts'), 'export const c = 1;\n');
    expect(check().status).toBe(3);
    markBuilt();
    writeFileSync(join(root, 'package.json'), '{"version":"2"}\n');
    expect(check().status).toBe(3);
  });
});
