/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { diagnostics: false }],
  },
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  // supertest and app.listen reach the app through the service's own HTTP server (test/helpers/app-server-setup.ts).
  setupFilesAfterEnv: ['<rootDir>/test/helpers/app-server-setup.ts'],
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  // Longest suites first, and Chromium suites one at a time where other suites can run beside them (test/timings.json).
  testSequencer: '<rootDir>/test/helpers/sequencer.js',
  testTimeout: 30000,
  maxWorkers: process.env.CI ? 2 : '50%',
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
