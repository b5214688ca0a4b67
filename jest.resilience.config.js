/** @type {import('jest').Config} */
// `npm run test:resilience`: the fuzz run and the security checks (test/resilience),
// kept out of the default run because the fuzz run alone sends 10,000+ requests.
const base = require("./jest.config");

module.exports = {
	...base,
	roots: ["<rootDir>/test/resilience"],
	testPathIgnorePatterns: ["/node_modules/"],
	testTimeout: 180000,
};
