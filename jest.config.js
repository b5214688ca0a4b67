/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: "node",
	roots: ["<rootDir>/test"],
	testMatch: ["**/*.test.ts"],
	// The resilience suite has its own run: npm run test:resilience (jest.resilience.config.js).
	testPathIgnorePatterns: ["/node_modules/", "<rootDir>/test/resilience/"],
	transform: { "^.+\\.ts$": ["ts-jest", {}] },
	globalSetup: "<rootDir>/test/setup/global-setup.ts",
	globalTeardown: "<rootDir>/test/setup/global-teardown.ts",
	testTimeout: 30000,
	maxWorkers: 2,
};
