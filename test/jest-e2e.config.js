module.exports = {
  rootDir: '..',
  testEnvironment: 'node',
  testRegex: 'test/.*\\.e2e-spec\\.ts$',
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: '<rootDir>/tsconfig.json',
        diagnostics: { ignoreCodes: [151002] },
        astTransformers: { before: ['<rootDir>/test/swagger-plugin.transformer.js'] },
      },
    ],
  },
  setupFiles: ['<rootDir>/test/setup-env.js'],
  testTimeout: 60_000,
};
