#!/usr/bin/env node
// Builds dist/ (`nest build`, then the console into dist/console) only when the compiled sources or the
// build settings changed since the last build made by this script: `npm start` then starts at once when nothing changed. The inputs'
// paths and contents (not their times: a checkout that changes nothing does not rebuild) are hashed
// into dist/.build-hash.
//   --force       build anyway
//   --check       build nothing; exit 0 when dist/ is up to date, 3 when a build is due
//   --root <dir>  the project (default: this script's project)
const { execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { existsSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { dirname, join, relative } = require('node:path');

const INPUT_DIRS = ['src', 'bench', 'console'];
const INPUT_FILES = [
  'ormconfig.ts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
];

function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts|css|html)$/.test(entry.name) && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

function inputsHash(root) {
  const files = [
    ...INPUT_DIRS.flatMap((dir) => sourceFiles(join(root, dir))),
    ...INPUT_FILES.map((file) => join(root, file)).filter((file) => existsSync(file)),
  ].sort();
  const hash = createHash('sha256');
  for (const file of files)
    hash
      .update(`${relative(root, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return hash.digest('hex');
}

function main(args) {
  const rootAt = args.indexOf('--root');
  const root = rootAt >= 0 ? args[rootAt + 1] : join(__dirname, '..');
  const hashFile = join(root, 'dist', '.build-hash');
  const wanted = inputsHash(root);
  const built =
    existsSync(join(root, 'dist', 'src', 'main.js')) && existsSync(hashFile)
      ? readFileSync(hashFile, 'utf8').trim()
      : null;
  const due = args.includes('--force') || built !== wanted;
  if (args.includes('--check')) {
    console.log(due ? 'build due' : 'dist/ is up to date');
    return due ? 3 : 0;
  }
  if (!due) return 0;
  console.error(built === null ? 'building dist/ ...' : 'sources changed: building dist/ ...');
  execFileSync(process.execPath, [require.resolve('@nestjs/cli/bin/nest.js'), 'build'], {
    cwd: root,
    stdio: 'inherit',
  });
  const consoleConfig = join(root, 'console', 'vite.config.mts');
  if (existsSync(consoleConfig)) {
    execFileSync(
      process.execPath,
      [
        join(dirname(require.resolve('vite/package.json')), 'bin', 'vite.js'),
        'build',
        '--config',
        consoleConfig,
      ],
      {
        cwd: root,
        stdio: 'inherit',
      },
    );
  }
  writeFileSync(hashFile, `${wanted}\n`);
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
module.exports = { inputsHash };
