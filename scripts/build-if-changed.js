#!/usr/bin/env node
// Builds dist/ (`nest build`) only when the compiled sources or the build settings changed since the
// last build made by this script: `npm start` then starts at once when nothing changed. The inputs'
// paths and contents are hashed into dist/.build-hash; `--force` builds anyway.
const { execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { existsSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');
const hashFile = join(root, 'dist', '.build-hash');
const INPUT_DIRS = ['src', 'bench'];
const INPUT_FILES = [
  'ormconfig.ts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
];

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

function inputsHash() {
  const files = [
    ...INPUT_DIRS.flatMap((dir) => sourceFiles(join(root, dir))),
    ...INPUT_FILES.map((file) => join(root, file)),
  ].sort();
  const hash = createHash('sha256');
  for (const file of files)
    hash
      .update(`${relative(root, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return hash.digest('hex');
}

const wanted = inputsHash();
const built =
  existsSync(join(root, 'dist', 'src', 'main.js')) && existsSync(hashFile)
    ? readFileSync(hashFile, 'utf8').trim()
    : null;
if (process.argv.includes('--force') || built !== wanted) {
  console.error(built === null ? 'building dist/ ...' : 'sources changed: building dist/ ...');
  execFileSync(process.execPath, [require.resolve('@nestjs/cli/bin/nest.js'), 'build'], {
    cwd: root,
    stdio: 'inherit',
  });
  writeFileSync(hashFile, `${wanted}\n`);
}
