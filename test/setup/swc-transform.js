// TypeScript for Jest through SWC: no per-file type check (`npm run typecheck` checks the whole
// project once), legacy decorators with their metadata as Nest's dependency injection and
// class-validator read them.
module.exports = {
  '^.+\\.ts$': [
    '@swc/jest',
    {
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2022',
        keepClassNames: true,
      },
      module: { type: 'commonjs' },
      sourceMaps: 'inline',
    },
  ],
};
