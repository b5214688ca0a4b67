/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.ts$": ["ts-jest", {}] },
  globalSetup: "<rootDir>/test/setup/global-setup.ts",
  globalTeardown: "<rootDir>/test/setup/global-teardown.ts",
  testTimeout: 30000,
  maxWorkers: 2,
};
