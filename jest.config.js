/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: "node",
	roots: ["<rootDir>/test"],
	testMatch: ["**/*.test.ts"],
	// The resilience suite has its own run: npm run test:resilience (jest.resilience.config.js).
	testPathIgnorePatterns: ["/node_modules/", "<rootDir>/test/resilience/"],
	transform: { "^.+\\.ts$": ["ts-jest", {}] },
	// Connections to anything but loopback are refused before a packet leaves (the workers' own; children's via NODE_OPTIONS).
	setupFiles: ["<rootDir>/test/setup/loopback-only.js"],
	globalSetup: "<rootDir>/test/setup/global-setup.ts",
	globalTeardown: "<rootDir>/test/setup/global-teardown.ts",
	testTimeout: 30000,
	maxWorkers: 2,
};
